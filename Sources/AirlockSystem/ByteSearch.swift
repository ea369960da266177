#if canImport(Glibc)
import Glibc
#endif

/// Finding one byte value in a buffer with the C library's memchr(3) (vectorised),
/// for scans that have nothing to do until that byte comes.
public enum ByteSearch {
    /// The offset of the first `byte` in `buffer` at or after `start`; nil when there is none.
    public static func firstIndex(of byte: UInt8, in buffer: UnsafeRawBufferPointer, from start: Int = 0) -> Int? {
        precondition(start >= 0 && start <= buffer.count, "start is within the buffer")
        guard start < buffer.count, let base = buffer.baseAddress else { return nil }
        guard let hit = memchr(base + start, Int32(byte), buffer.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(hit))
    }
}
