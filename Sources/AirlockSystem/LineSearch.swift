#if canImport(Glibc)
import Glibc
#endif

/// Finding lines by a substring in a large buffer, with the C library's strstr(3)
/// (vectorised), so a look through a journal stays one fast pass.
public enum LineSearch {
    /// The lines of a NUL-terminated buffer that contain `needle`. A NUL inside the
    /// buffer (a tail a power cut zero-filled) only ends the search up to it.
    public static func lines(in buffer: [UInt8], containing needle: String) -> [ArraySlice<UInt8>] {
        precondition(buffer.last == 0, "the buffer is NUL-terminated")
        var result: [ArraySlice<UInt8>] = []
        buffer.withUnsafeBufferPointer { raw in
            let base = UnsafeRawPointer(raw.baseAddress!).assumingMemoryBound(to: CChar.self)
            let end = raw.count - 1
            var offset = 0
            while offset < end {
                guard let hit = strstr(base + offset, needle) else {
                    offset += strlen(base + offset) + 1
                    continue
                }
                let at = base.distance(to: hit)
                let start = (buffer[..<at].lastIndex(of: 0x0A)).map { $0 + 1 } ?? 0
                let stop = buffer[at...].firstIndex(where: { $0 == 0x0A || $0 == 0 }) ?? end
                result.append(buffer[start..<stop])
                offset = stop
            }
        }
        return result
    }
}
