import AirlockEvents
import AirlockFormats
import AirlockPolicy
import AirlockSystem

/// The configuration's `formats`: which kinds of drop airlock decodes at all.
///
/// The default is what airlock has always read; RAR, ISO 9660, CAB and cpio
/// are read through the same confined libarchive child under the same rules,
/// but only when named, since each libarchive reader is more code that hostile
/// bytes reach. Compression filters belong to `tar`. libarchive's mtree
/// reader (whose entries name files on the local disk) and its raw reader are
/// not offered at all.
public struct FormatList: Sendable, Equatable {
    public static let names = ["zip", "tar", "7z", "keyed", "rar", "iso9660", "cab", "cpio"]
    public static let defaults = ["zip", "tar", "7z", "keyed"]

    public private(set) var enabled: [String] = FormatList.defaults

    public init() {}

    /// Reads the top-level `formats` array, if given: known names, at least one, no repeats.
    init(_ names: [String]?) throws(ConfigurationError) {
        guard let names else { return }
        let quoted = FormatList.names.map { "\"\($0)\"" }.joined(separator: ", ")
        guard !names.isEmpty, Set(names).count == names.count else {
            throw ConfigurationError("formats: must list one or more of \(quoted), each once")
        }
        if let unknown = names.first(where: { !FormatList.names.contains($0) }) {
            throw ConfigurationError("formats: \(JSONObjectWriter.quote(unknown)) is not a format airlock reads (one of \(quoted))")
        }
        enabled = FormatList.names.filter(names.contains)
    }

    /// The list's name for a drop format.
    static func listName(_ format: DropFormat) -> String {
        switch format {
        case .keyed: return "keyed"
        case .archive(let archive):
            switch archive {
            case .zip, .sevenZip, .rar, .iso9660, .cab, .cpio: return archive.rawValue
            case .tar, .tarGzip, .tarBzip2, .tarXz, .tarZstd, .tarLzip, .tarLzma: return "tar"
            }
        }
    }

    /// Why a drop of `format` is not decoded, or nil when the list names it.
    package func refusal(_ format: DropFormat) -> Rejection? {
        let name = FormatList.listName(format)
        guard !enabled.contains(name) else { return nil }
        var rejection = Rejection(.unsupportedFormat,
            "\(format.name) drops are not enabled: add \"\(name)\" to the \"formats\" list of airlock.json to read them")
        rejection.format = format.name
        return rejection
    }

    var rendered: String { "\"formats\": [\(enabled.map { "\"\($0)\"" }.joined(separator: ", "))]" }
}

extension DropFormat {
    /// An ISO 9660 image, known by its first volume descriptor at sector 16;
    /// asked only of a drop whose first bytes named no format.
    package static func isoImage(_ drop: FileDescriptor, size: Int64) throws(SystemError) -> DropFormat? {
        guard size >= ArchiveFormat.isoDescriptorOffset + 7 else { return nil }
        var descriptor = [UInt8](repeating: 0, count: 7)
        let got = try descriptor.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try drop.read(into: raw, at: ArchiveFormat.isoDescriptorOffset) }
        }.get()
        return got == 7 && ArchiveFormat.isISO9660Descriptor(descriptor) ? .archive(.iso9660) : nil
    }
}
