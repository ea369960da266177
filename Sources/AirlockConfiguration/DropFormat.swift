import AirlockChild
import AirlockFormats
import AirlockSystem

/// What a drop is, from its first bytes, and which decoder child reads it.
public enum DropFormat: Equatable, Sendable {
    case archive(ArchiveFormat)
    /// A property list that may be an NSKeyedArchiver archive; the keyed decoder
    /// checks `$archiver`.
    case keyed

    public var name: String {
        switch self {
        case .archive(let format): return format.rawValue
        case .keyed: return "keyed"
        }
    }

    /// The decoder program, installed beside `airlock`.
    package var program: String {
        switch self {
        case .archive: return "airlock-decoder"
        case .keyed: return "airlock-keyed-decoder"
        }
    }

    static let programs = ["airlock-decoder", "airlock-keyed-decoder"]

    /// Sniffs archives first, then property lists (binary `bplist00`, or XML with a
    /// `<plist` element near the start).
    package static func sniff(_ prefix: [UInt8]) -> DropFormat? {
        if let archive = ArchiveFormat.sniff(prefix) { return .archive(archive) }
        if prefix.starts(with: Array("bplist00".utf8)) { return .keyed }
        var text = prefix[...]
        if text.starts(with: [0xEF, 0xBB, 0xBF]) { text = text.dropFirst(3) }
        while let first = text.first, first == 0x20 || first == 0x0A || first == 0x0D || first == 0x09 { text = text.dropFirst() }
        if text.starts(with: Array("<?xml".utf8)) || text.starts(with: Array("<!DOCTYPE plist".utf8)) || text.starts(with: Array("<plist".utf8)) {
            let window = Array(text.prefix(512))
            let needle = Array("<plist".utf8)
            if window.count >= needle.count, (0...(window.count - needle.count)).contains(where: { Array(window[$0..<($0 + needle.count)]) == needle }) {
                return .keyed
            }
        }
        return nil
    }

    /// A ZIP that does not begin at byte 0, known by its end record.
    package static func zipBehindPrefix(_ drop: FileDescriptor, size: Int64) throws(SystemError) -> DropFormat? {
        let count = Int(min(size, Int64(ArchiveFormat.zipTailLength)))
        var tail = [UInt8](repeating: 0, count: count)
        let got = try tail.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try drop.read(into: raw, at: size - Int64(count)) }
        }.get()
        return ArchiveFormat.endsLikeZip(Array(tail[0..<got])) ? .archive(.zip) : nil
    }

    /// The child's request for this format.
    package func decoderRequest(_ configuration: Configuration, mode: DecoderRequest.Mode, progress: Bool = false) -> DecoderRequest {
        let name: String
        switch self {
        case .archive(let format): name = format.rawValue
        case .keyed: name = "keyed"
        }
        return configuration.decoderRequest(mode: mode, format: name, progress: progress)
    }
}

extension Configuration {
    /// The request for a decoder child of `format` (`none` for a probe), every field from this configuration.
    package func decoderRequest(mode: DecoderRequest.Mode, format: String, progress: Bool = false) -> DecoderRequest {
        DecoderRequest(mode: mode, format: format, progress: progress,
                       magicDatabase: content.runsLibmagic ? content.magicDatabase : nil, limits: decoderLimits, policy: decoderPolicy,
                       zipLegacyEncoding: legacyNames.zipEncoding, tarLegacyEncoding: legacyNames.tarEncoding.isEmpty ? nil : legacyNames.tarEncoding,
                       keyed: keyed)
    }
}
