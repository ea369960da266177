import AirlockSystem
import CCrypto

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
        return hex(digest)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Lower-case hex, two digits a byte: once per staged file, so without a String per byte.
    static func hex(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

extension Digest {
    /// Files from this size up get their writeback started as they are hashed.
    static let writebackMinimumBytes: Int64 = 1 << 20
}
