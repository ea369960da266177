#if canImport(Glibc)
import Glibc
#endif

/// A converter from one character encoding to UTF-8, through glibc's iconv.
///
/// glibc loads the code page's gconv module (a shared object under
/// /usr/lib/x86_64-linux-gnu/gconv) when the converter is opened, never while
/// converting, so a process that confines its file access opens every converter
/// it needs first and converts afterwards without touching the file system.
public final class TextConverter {
    /// The encoding's name as given, for messages.
    public let encoding: String
    private let descriptor: iconv_t

    /// Opens a converter from `encoding` to UTF-8 (`iconv_open`).
    ///
    /// Names that ask iconv to repair what it cannot convert (`//TRANSLIT`,
    /// `//IGNORE`) are refused: a name that does not convert must be reported,
    /// not silently changed into another one.
    /// - Throws: `SystemError` with EINVAL for an encoding glibc does not know.
    public init(from encoding: String) throws(SystemError) {
        guard TextConverter.isPlainName(encoding) else {
            throw SystemError("iconv_open", text: encoding, Errno(rawValue: EINVAL))
        }
        let opened = iconv_open("UTF-8", encoding)
        guard let opened, opened != iconv_t(bitPattern: -1) else {
            throw SystemError("iconv_open", text: encoding, Errno.current)
        }
        self.encoding = encoding
        descriptor = opened
    }

    deinit { iconv_close(descriptor) }

    /// Letters, digits and `-`, `_`, `.`, `:`; at most 64 bytes.
    public static func isPlainName(_ encoding: String) -> Bool {
        !encoding.isEmpty && encoding.utf8.count <= 64
            && encoding.utf8.allSatisfy { $0 < 0x80 && (isalnum(Int32($0)) != 0 || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E || $0 == 0x3A) }
    }

    /// `bytes` converted to UTF-8 (`iconv`), or nil when they are not a complete,
    /// valid text in the converter's encoding.
    public func utf8(_ bytes: [UInt8]) -> [UInt8]? {
        // Back to the initial shift state, so one name's state cannot leak into the next.
        _ = iconv(descriptor, nil, nil, nil, nil)
        var input = bytes.map { CChar(bitPattern: $0) }
        // Four bytes of UTF-8 per input byte, plus room for a closing shift sequence.
        var output = [CChar](repeating: 0, count: bytes.count * 4 + 16)
        let produced: Int? = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
                var inLeft = inBuffer.count
                var outPointer: UnsafeMutablePointer<CChar>? = outBuffer.baseAddress
                var outLeft = outBuffer.count
                if inLeft > 0, iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft) == -1 { return nil }
                guard inLeft == 0, iconv(descriptor, nil, nil, &outPointer, &outLeft) != -1 else { return nil }
                return outBuffer.count - outLeft
            }
        }
        guard let produced else { return nil }
        return output[0..<produced].map { UInt8(bitPattern: $0) }
    }
}
