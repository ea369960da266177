import AirlockChild
import AirlockSystem

extension ZipDirectory {
    /// Why the directory could not be taken as it stands.
    public enum Failure: Error, Sendable {
        /// The bytes are not a ZIP every reader reads the same way.
        case malformed(String)
        /// The directory is well-formed but lists more entries than the policy
        /// allows; it was not read further.
        case tooManyEntries(Int64)
        /// Reading the drop failed: a fault of the machine, not of the bytes.
        case unreadable(SystemError)
    }

    /// Bounded positional reads of the drop, and checked arithmetic on the
    /// numbers it declares: a size or offset near 2^63 is a lie to reject, never
    /// an overflow that stops the decoder.
    ///
    /// Small reads are served from a window of the drop read ahead: a ZIP's local
    /// records lie one after another, and checking each took three preads of
    /// 30-50 bytes (about 3,000 for a thousand small files), where one pread of
    /// the window now serves a run of them. The drop is a claimed file nobody
    /// writes, so a byte read ahead is the byte a pread would return.
    package struct Reader {
        let file: DropFile
        package let size: Int64
        private let window = Window()

        /// The bytes read ahead: `bytes` from `offset` in the drop.
        private final class Window {
            static let length = 64 * 1024
            var offset: Int64 = 0
            var bytes: [UInt8] = []
        }

        package func bytes(at offset: Int64, count: Int) throws(Failure) -> [UInt8] {
            let end = try Reader.sum(offset, Int64(count))
            guard offset >= 0, count >= 0, end <= size else {
                throw .malformed("a record points past the end of the file")
            }
            guard count <= Window.length / 4 else { return try read(at: offset, count: count) }
            if offset < window.offset || end > window.offset + Int64(window.bytes.count) {
                window.bytes = try read(at: offset, count: Int(min(Int64(Window.length), size - offset)))
                window.offset = offset
            }
            let start = Int(offset - window.offset)
            return Array(window.bytes[start..<(start + count)])
        }

        /// `count` bytes from `offset`, all of them, or why not.
        private func read(at offset: Int64, count: Int) throws(Failure) -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            let result = buffer.withUnsafeMutableBytes { b in
                Result { () throws(SystemError) in try file.read(into: b, at: offset) }
            }
            switch result {
            case .failure(let error): throw .unreadable(error)
            case .success(let got): guard got == count else { throw .malformed("the file ended early") }
            }
            return buffer
        }

        /// The sum of archive-declared numbers, or a rejection when it leaves Int64.
        package static func sum(_ values: Int64...) throws(Failure) -> Int64 {
            var total: Int64 = 0
            for value in values {
                let (next, overflow) = total.addingReportingOverflow(value)
                guard !overflow else { throw .malformed("a declared size or offset is out of range") }
                total = next
            }
            return total
        }

        /// A 64-bit field as a non-negative Int64, or a rejection.
        static func int64(_ value: UInt64, _ what: String) throws(Failure) -> Int64 {
            guard value <= UInt64(Int64.max) else { throw .malformed("\(what) is out of range") }
            return Int64(value)
        }

        package init(file: DropFile, size: Int64) {
            self.file = file
            self.size = size
        }
    }
}

extension Array where Element == UInt8 {
    package func u16(_ at: Int) -> UInt16 { UInt16(self[at]) | UInt16(self[at + 1]) << 8 }
    package func u32(_ at: Int) -> UInt32 { UInt32(u16(at)) | UInt32(u16(at + 2)) << 16 }
    package func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) | UInt64(u32(at + 4)) << 32 }
}
