import AirlockChild
import AirlockPolicy
import AirlockZip

extension ArchiveScan {
    /// A ZIP's central directory, judged by the policy before any entry is read;
    /// nil when the scan ends there (a finding, a failed read, or no entries).
    func zipDirectory(_ file: DropFile, outcome: inout ScanOutcome) -> ZipDirectory? {
        let directory: ZipDirectory
        do {
            directory = try ZipDirectory(file: file, fileSize: dropSize, maxEntries: policy.maxEntries, legacyNames: legacyNames.zip)
        } catch {
            switch error {
            case .tooManyEntries(let count):
                outcome.findings.record(Violation(.tooManyEntries, "\(count) entries exceed \(policy.maxEntries)"))
            case .malformed(let detail):
                outcome.findings.record(Violation(.corruptArchive, detail))
            case .unreadable(let failure):
                outcome.systemError = failure
                outcome.failedWhile = .readingDrop
            }
            return nil
        }
        let preflight = Preflight(policy: policy).judge(directory)
        outcome.findings = preflight
        // An archive of no entries is only its end record (libarchive's seekable
        // reader does not recognise one): nothing more to read.
        guard preflight.isClean, !directory.entries.isEmpty else { return nil }
        return directory
    }
}
