import AirlockChild
import AirlockPolicy
import AirlockSystem
import AirlockText

extension EntryScan {
    /// Decodes a tar name that is not UTF-8 from the configured encoding, or
    /// rejects it saying which setting would read it. A tar header records no
    /// encoding (GNU tar writes the bytes of the system's locale; a pax header
    /// with `hdrcharset=BINARY` says only that they are not UTF-8), so nothing
    /// but the operator can say what the bytes mean.
    func judgeTarName(_ yielded: [UInt8], judge: inout EntryJudge, findings: inout Findings) {
        guard String(validating: yielded, as: UTF8.self) == nil else { return }
        guard let converter = legacyNames?.tar else {
            findings.record(judge.violation(.unsafePath, "the name is not UTF-8; if the archive comes from a system with a legacy"
                + " encoding, set tar.legacy_encoding to it (for example \"latin1\")"))
            return
        }
        guard let decoded = converter.utf8(yielded) else {
            findings.record(judge.violation(.unsafePath, "the name is neither UTF-8 nor valid \(converter.encoding)"))
            return
        }
        judge = EntryJudge(policy: judge.policy, raw: decoded, index: judge.index)
        judge.stored = (yielded, converter.encoding)
    }
}
