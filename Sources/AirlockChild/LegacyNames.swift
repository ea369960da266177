import AirlockSystem

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

    /// Opens the converters the request names (`tar` nil: none). Called before
    /// the decoder confines itself: opening one loads a gconv module from disk.
    public static func open(zip zipName: String, tar tarName: String?) -> Result<LegacyNames, SystemError> {
        do {
            return .success(LegacyNames(zip: try TextConverter(from: zipName), tar: try tarName.map { name throws(SystemError) in try TextConverter(from: name) }))
        } catch {
            return .failure(error)
        }
    }

    /// What a rejection says about a name stored in other bytes than it lands as.
    package static func storedNote(_ stored: [UInt8], encoding: String) -> String {
        let digits = Array("0123456789abcdef".utf8)
        let hex = String(decoding: stored.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }, as: UTF8.self)
        return " (the archive stores the name in \(encoding) as bytes \(hex))"
    }
}
