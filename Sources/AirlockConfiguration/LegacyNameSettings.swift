import AirlockChild
import AirlockPolicy
import AirlockSystem

/// The `zip` and `tar` sections' `legacy_encoding`: the code page of names that
/// are not UTF-8, checked against glibc's iconv when the configuration is read.
public struct LegacyNameSettings: Sendable, Equatable {
    /// ZIP names without the UTF-8 flag that are not UTF-8; the ZIP
    /// specification's IBM code page 437 unless the producers use another.
    public var zipEncoding = LegacyNames.zipDefault
    /// Tar names that are not UTF-8; empty: such names are rejected.
    public var tarEncoding = ""

    public init() {}

    /// Reads `legacy_encoding` from the section named `section`, if it is there.
    mutating func read(_ section: String, _ reader: inout ObjectReader) throws(ConfigurationError) {
        guard let name = try reader.string("legacy_encoding") else { return }
        let key = "\(section).legacy_encoding"
        if section == "tar" && name.isEmpty {
            tarEncoding = ""
            return
        }
        do {
            _ = try TextConverter(from: name)
        } catch {
            throw ConfigurationError("\(key): \(JSONObjectWriter.quote(name)) is not an encoding glibc's iconv can read"
                + " (for example \"CP437\", \"CP850\", \"CP866\", \"CP932\", \"LATIN1\"; `iconv --list` lists them)")
        }
        if section == "zip" { zipEncoding = name } else { tarEncoding = name }
    }

    func rendered(_ section: String) -> [String] {
        ["\"legacy_encoding\": \(JSONObjectWriter.quote(section == "zip" ? zipEncoding : tarEncoding))"]
    }
}
