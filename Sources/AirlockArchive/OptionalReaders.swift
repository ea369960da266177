import AirlockFormats
import CArchive

/// libarchive's side of the optional formats: AirlockFormats recognises them
/// without linking libarchive, the decoder child turns on their readers here.
extension ArchiveFormat {
    /// Turns on libarchive's reader for an optional format; nil for the others.
    /// Never the mtree reader (its entries name files on the local disk) nor
    /// the raw one (it takes any bytes for one file).
    func optionalReaderStatus(_ archive: OpaquePointer) -> Int32? {
        switch self {
        case .rar:
            let status = archive_read_support_format_rar(archive)
            return status == ARCHIVE_OK ? archive_read_support_format_rar5(archive) : status
        case .iso9660: return archive_read_support_format_iso9660(archive)
        case .cab: return archive_read_support_format_cab(archive)
        case .cpio: return archive_read_support_format_cpio(archive)
        default: return nil
        }
    }
}

extension EntryScan {
    /// libarchive yields an ISO 9660 image's root directory as ".", which is
    /// no entry of the tree: it is passed over, as bsdtar does on extraction.
    func isImageRoot(_ yielded: [UInt8], _ entry: OpaquePointer) -> Bool {
        format == .iso9660 && yielded == [0x2E] && archive_entry_filetype(entry) == 0o040000
    }
}
