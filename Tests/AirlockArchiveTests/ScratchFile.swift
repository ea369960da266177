import AirlockSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
func le32(_ value: UInt32) -> [UInt8] { le16(UInt16(value & 0xFFFF)) + le16(UInt16(value >> 16)) }

/// Archive bytes in a file of their own, as a decoder is handed a drop.
enum ScratchFile {
    /// An open, already unlinked file holding `bytes` (made in a directory of its
    /// own in the temporary directory, removed before this returns).
    static func holding(_ bytes: [UInt8]) throws -> FileDescriptor {
        var template = Array((NSTemporaryDirectory() + "/airlock-archive-test-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw Errno.current }
        let path = String(cString: template)
        defer { rmdir(path) }
        let directory = try FileDescriptor.openDirectory(path: path)
        defer { directory.close() }
        let name = Array("drop".utf8)
        let file = try directory.open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode: 0o600)
        try directory.unlink(name)
        do { try file.writeAll(bytes) } catch { file.close(); throw error }
        return file
    }
}
