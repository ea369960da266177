import CAirlockShims
#if canImport(Glibc)
import Glibc
#endif

/// The number of terminal columns `text` takes, by glibc's wcwidth(3) in the
/// C.UTF-8 locale: a CJK ideograph or a wide emoji takes two, a combining mark
/// none. Tables pad by this rather than by character count, so that wide names
/// do not push the columns after them out of line.
public func displayWidth(_ text: String) -> Int {
    withUTF8Locale {
        text.unicodeScalars.reduce(0) { total, scalar in
            // A scalar wcwidth cannot place (-1) still takes a column on most terminals.
            let width = Int(airlock_wcwidth(scalar.value))
            return total + (width < 0 ? 1 : width)
        }
    }
}

/// `text` followed by spaces up to `columns` display columns.
public func padded(_ text: String, toColumns columns: Int) -> String {
    text + String(repeating: " ", count: max(0, columns - displayWidth(text)))
}

/// Runs `body` with this thread's character type set to C.UTF-8 (wcwidth's
/// answers depend on it), restoring the previous locale after.
private func withUTF8Locale<T>(_ body: () -> T) -> T {
    guard let locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil) else { return body() }
    defer { freelocale(locale) }
    let previous = uselocale(locale)
    defer { uselocale(previous) }
    return body()
}
