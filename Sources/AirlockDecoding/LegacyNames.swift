import AirlockPolicy
import AirlockSystem
import CLzma

/// How entry names that are not UTF-8 are read.
///
/// A ZIP name without the UTF-8 flag is, by the ZIP specification, in IBM code
/// page 437, and in practice in the OEM code page of the Windows that wrote it;
/// a valid UTF-8 name without the flag is taken as UTF-8, since Finder and
/// Info-ZIP on Linux write UTF-8 without setting it. A tar header has no
/// encoding at all: its names are taken as UTF-8 unless the operator names the
/// producers' legacy encoding. The decoded UTF-8 name is the one the path
/// policy judges and the one that lands; rejections quote the stored bytes too.
public struct LegacyNames {
    /// The decoder child's arguments naming each encoding.
    public static let zipArgument = "--zip-legacy-encoding="
    public static let tarArgument = "--tar-legacy-encoding="
    /// What the ZIP specification says a name without the UTF-8 flag is in.
    public static let zipDefault = "CP437"

    /// Converts ZIP names without the flag that are not UTF-8.
    public let zip: TextConverter
    /// Converts tar names that are not UTF-8; nil: such a name is rejected.
    public let tar: TextConverter?

    public init(zip: TextConverter, tar: TextConverter?) {
        self.zip = zip
        self.tar = tar
    }

    /// Opens the converters the arguments name (removing those arguments), or
    /// the ZIP default. Called before the decoder confines itself: opening one
    /// loads a gconv module from disk.
    public static func open(taking arguments: inout [String]) -> Result<LegacyNames, SystemError> {
        func take(_ prefix: String) -> String? {
            guard let index = arguments.firstIndex(where: { $0.hasPrefix(prefix) }) else { return nil }
            return String(arguments.remove(at: index).dropFirst(prefix.count))
        }
        let zipName = take(zipArgument) ?? zipDefault
        let tarName = take(tarArgument)
        do {
            return .success(LegacyNames(zip: try TextConverter(from: zipName), tar: try tarName.map { name throws(SystemError) in try TextConverter(from: name) }))
        } catch {
            return .failure(error)
        }
    }

    /// What a rejection says about a name stored in other bytes than it lands as.
    static func storedNote(_ stored: [UInt8], encoding: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let hex = String(decoding: stored.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
        return " (the archive stores the name in \(encoding) as bytes \(hex))"
    }
}

/// One ZIP entry's name: the bytes its headers store, the UTF-8 name that is
/// judged and lands, and the name libarchive yields for it.
struct ZipName {
    let landing: [UInt8]
    let key: ZipDirectory.NameKey
    /// The legacy code page the landing name was decoded from, if it was.
    let encoding: String?

    /// Reads a stored name by the rules of `LegacyNames`, with its Unicode path
    /// field, if any.
    ///
    /// The field is bound to the header name by a CRC of the header's bytes.
    /// Readers that know it (libarchive, unzip, 7-Zip) take it over the header
    /// name when the CRC matches and ignore it otherwise; readers that do not
    /// (Python's zipfile) read the header name. So the field must name what the
    /// header name decodes to, or two readers extract two different names.
    static func resolve(stored: [UInt8], flags: UInt16, unicode: ZipExtra.UnicodePath?,
                        converter: TextConverter) throws(ZipDirectory.Failure) -> ZipName {
        let flaggedUTF8 = flags & 0x0800 != 0
        let storedText = String(validating: stored, as: UTF8.self)
        var landing = stored, encoding: String? = nil
        if !flaggedUTF8, storedText == nil, let decoded = converter.utf8(stored) {
            landing = decoded
            encoding = converter.encoding
        }
        guard let unicode else { return ZipName(landing: landing, key: .init(stored), encoding: encoding) }
        let label = EscapedName(stored)
        guard unicode.version == 1, let text = String(validating: unicode.name, as: UTF8.self) else {
            throw .malformed("\(label): its Unicode path field is not version 1 UTF-8")
        }
        guard let landingText = String(validating: landing, as: UTF8.self), landingText == text else {
            if unicode.nameCRC != ZipCRC.of(stored) {
                throw .malformed("\(label): its Unicode path field, whose checksum does not match the name, names another entry")
            }
            throw .malformed("\(label): its Unicode path field names \(EscapedName(unicode.name)), the name itself reads as \(EscapedName(landing))"
                + (flaggedUTF8 ? "" : " in \(encoding ?? "UTF-8"); readers that ignore the field would extract another name"
                   + " (if the archive comes from a system with another code page, set zip.legacy_encoding)"))
        }
        // A matching CRC: the field's spelling is what the readers that know it extract.
        if unicode.nameCRC == ZipCRC.of(stored) {
            return ZipName(landing: unicode.name, key: .init(unicode.name), encoding: encoding)
        }
        return ZipName(landing: landing, key: .init(stored), encoding: encoding)
    }
}

/// The CRC-32 of ZIP, liblzma's, for the names a Unicode path field is checked against.
enum ZipCRC {
    static func of(_ bytes: [UInt8]) -> UInt32 { lzma_crc32(bytes, bytes.count, 0) }
}

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
