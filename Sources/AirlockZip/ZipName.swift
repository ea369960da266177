import AirlockChild
import AirlockSystem
import AirlockText
import CLzma

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
    /// (Python's zipfile) read the header name. So a field whose CRC matches must
    /// name what the header name decodes to, or two readers extract two
    /// different names.
    static func resolve(stored: [UInt8], flags: UInt16, unicode: ZipExtra.UnicodePath?,
                        converter: TextConverter) throws(ZipDirectory.Failure) -> ZipName {
        let flaggedUTF8 = flags & 0x0800 != 0
        let storedText = String(validating: stored, as: UTF8.self)
        var landing = stored, encoding: String? = nil
        if !flaggedUTF8, storedText == nil, let decoded = converter.utf8(stored) {
            landing = decoded
            encoding = converter.encoding
        }
        // A field whose CRC does not match the header name was written for another
        // name (the name was changed after): the specification (APPNOTE 4.6.9) says
        // to ignore it, and libarchive, unzip and 7-Zip do, so every reader that
        // knows the field reads the header name, like those that do not.
        guard let unicode, unicode.nameCRC == ZipCRC.of(stored) else {
            return ZipName(landing: landing, key: .init(stored), encoding: encoding)
        }
        let label = EscapedName(stored)
        guard unicode.version == 1, let text = String(validating: unicode.name, as: UTF8.self) else {
            throw .malformed("\(label): its Unicode path field is not version 1 UTF-8")
        }
        guard let landingText = String(validating: landing, as: UTF8.self), landingText == text else {
            throw .malformed("\(label): its Unicode path field names \(EscapedName(unicode.name)), the name itself reads as \(EscapedName(landing))"
                + (flaggedUTF8 ? "" : " in \(encoding ?? "UTF-8"); readers that ignore the field would extract another name"
                   + " (if the archive comes from a system with another code page, set zip.legacy_encoding)"))
        }
        // A matching CRC: the field's spelling is what the readers that know it extract.
        return ZipName(landing: unicode.name, key: .init(unicode.name), encoding: encoding)
    }
}

/// The CRC-32 of ZIP, liblzma's, for the names a Unicode path field is checked against.
enum ZipCRC {
    static func of(_ bytes: [UInt8]) -> UInt32 { lzma_crc32(bytes, bytes.count, 0) }
}
