import AirlockSystem
import CCrypto
import Dispatch
import Synchronization

/// SHA-256 of an open file, through OpenSSL's libcrypto.
enum Digest {
    /// The hash of the whole file, or nil when it holds more than `limit` bytes:
    /// then it reads `limit` + 1 bytes and no more, so a drop's declared size (a
    /// sparse file can claim terabytes) never decides how much is read. `known`:
    /// the file's size, when the caller has just asked for it.
    static func sha256(of file: FileDescriptor, limit: Int64, size known: Int64? = nil) throws(SystemError) -> String? {
        guard let context = EVP_MD_CTX_new() else { throw SystemError("EVP_MD_CTX_new", nil, Errno(rawValue: 12)) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            throw SystemError("EVP_DigestInit_ex", nil, Errno(rawValue: 22))
        }
        // No bigger than the file needs: most files are small, and a buffer is
        // zeroed and faulted in whole each time one is hashed.
        let size: Int64
        if let known { size = known } else { size = try file.status().size }
        var buffer = [UInt8](repeating: 0, count: Int(max(4096, min(256 * 1024, min(size, limit) + 1))))
        var offset: Int64 = 0
        while true {
            let wanted = Int(min(Int64(buffer.count), limit - offset + 1))
            let n = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try file.read(into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<wanted]), at: offset) }
            }.get()
            if n == 0 { break }
            offset += Int64(n)
            if offset > limit { return nil }
            _ = buffer.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, n) }
            if n < wanted { break }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &length) == 1, length == 32 else {
            throw SystemError("EVP_DigestFinal_ex", nil, Errno(rawValue: 22))
        }
        return digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

extension Digest {
    /// Files from this size up get their writeback started as they are hashed.
    static let writebackMinimumBytes: Int64 = 1 << 20

    /// The SHA-256 of each regular file `names` names in `directory`, in the same
    /// order (nil for one over `limit` bytes), on as many threads as there are
    /// processors: the manifest re-reads every byte the decoder wrote, after it
    /// has exited and before the commit, and a drop of a few large files would
    /// otherwise wait for them one after another on one core.
    /// A file `early` hashed while the decoder ran, and whose lease still stands, is not read again.
    static func sha256(ofFiles names: [[UInt8]], in directory: FileDescriptor, limit: Int64,
                       early: EarlyDigests? = nil) throws(SystemError) -> [String?] {
        let results = Mutex<[Result<String?, SystemError>?]>(Array(repeating: nil, count: names.count))
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            let result = Result { () throws(SystemError) -> String? in
                try directory.open(names[index], [.readOnly, .noFollow]).closeAfter { (fd) throws(SystemError) -> String? in
                    let status = try fd.status()
                    if let known = early?.sha256(for: status) { return known }
                    // The commit's syncfs (or fsync) waits for a large file's pages:
                    // start writing them now, while they are hashed. Only a head
                    // start: durability is the later call's, which reports any
                    // failure. Small files are left to that call, which writes them
                    // together for less than a call per file costs.
                    if status.size >= writebackMinimumBytes { try? fd.startWriteback() }
                    return try sha256(of: fd, limit: limit, size: status.size)
                }
            }
            results.withLock { $0[index] = result }
        }
        let hashes = results.withLock { $0 }
        var output: [String?] = []
        output.reserveCapacity(hashes.count)
        for hash in hashes { output.append(try hash!.get()) }
        return output
    }
}
