#if DEBUG
#if canImport(Glibc)
import Glibc
#endif

/// Debug builds only: how a subverted decoder could change a file after saying
/// it had finished it, for the decoder's test faults. Nothing in a release
/// build can reach them.
package enum LateWrites {
    /// A shared, writable mmap(2) of the first `length` bytes of `file`: it
    /// outlives the descriptor's close, and what is written through it reaches
    /// the file. nil when mmap fails.
    package static func mapForWriting(_ file: FileDescriptor, length: Int) -> UnsafeMutableRawBufferPointer? {
        guard let start = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, file.rawValue, 0), start != MAP_FAILED else {
            return nil
        }
        return UnsafeMutableRawBufferPointer(start: start, count: length)
    }

    /// Writes `byte` over the whole of `mapping`, then unmaps it.
    package static func overwrite(_ mapping: UnsafeMutableRawBufferPointer, with byte: UInt8) {
        guard let start = mapping.baseAddress else { return }
        start.initializeMemory(as: UInt8.self, repeating: byte, count: mapping.count)
        _ = munmap(start, mapping.count)
    }
}
#endif
