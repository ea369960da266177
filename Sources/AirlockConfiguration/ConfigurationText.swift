import CJansson
import Foundation

/// The text of a configuration file, checked as strict JSON before any value is
/// read from it. Foundation's readers keep the last of two equal keys and cannot
/// say where a syntax error is; Jansson refuses duplicate keys and trailing
/// commas and reports the line and column of the first problem, so a person can
/// find it. Keys written as `"// key"` are ordinary, distinct keys to Jansson, so
/// the comments `airlock init` writes stay valid.
enum ConfigurationText {
    /// Throws a `ConfigurationError` giving the line, the column and what is wrong
    /// when `data` is not one JSON object or array without duplicate keys.
    static func check(_ data: Data) throws(ConfigurationError) {
        // Integers are read as reals so that a number too large for Int64 reaches the
        // range check, which names the key and the allowed values; NUL in a string
        // likewise reaches the check of the setting that holds it.
        let flags = size_t(JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL)
        var error = json_error_t()
        // A trailing NUL, not counted, gives even an empty file a buffer to point at.
        let bytes = [CChar](unsafeUninitializedCapacity: data.count + 1) { buffer, count in
            _ = data.withUnsafeBytes { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: $0) }
            buffer[data.count] = 0
            count = data.count + 1
        }
        let value = bytes.withUnsafeBufferPointer { json_loadb($0.baseAddress!, data.count, flags, &error) }
        if let value {
            json_decref(value)
            return
        }
        let text = withUnsafeBytes(of: &error.text) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        throw ConfigurationError("not valid JSON at line \(error.line), column \(error.column): \(reworded(text))")
    }

    /// Jansson's wording, with its duplicate-key message put the way the rest of
    /// the configuration errors speak.
    private static func reworded(_ text: String) -> String {
        if text.hasPrefix("duplicate object key") {
            return "a key given twice (" + text + ")"
        }
        return text
    }
}
