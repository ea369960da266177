import AirlockSystem
import CCrypto

/// SHA-256 of a whole open file, through OpenSSL's libcrypto.
enum Digest {
    static func sha256(of file: FileDescriptor) throws(SystemError) -> String {
        guard let context = EVP_MD_CTX_new() else { throw SystemError("EVP_MD_CTX_new", nil, Errno(rawValue: 12)) }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            throw SystemError("EVP_DigestInit_ex", nil, Errno(rawValue: 22))
        }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var offset: Int64 = 0
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(SystemError) in try file.read(into: raw, at: offset) }
            }.get()
            if n == 0 { break }
            _ = buffer.withUnsafeBytes { EVP_DigestUpdate(context, $0.baseAddress, n) }
            offset += Int64(n)
            if n < buffer.count { break }
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
