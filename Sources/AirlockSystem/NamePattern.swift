#if canImport(Glibc)
import Glibc
#endif

/// A shell pattern (`*.part`, `.*`) matched against an entry's name with
/// fnmatch(3), ASCII letters matched regardless of case (`FNM_CASEFOLD`), so
/// that `x.PART` and `x.filepart` match `*.part` and `*.filepart`.
public struct NamePattern: Sendable, Equatable {
    public let text: String

    public init(_ text: String) { self.text = text }

    /// Whether `name` (raw bytes, no NUL) matches the pattern.
    public func matches(_ name: [UInt8]) -> Bool {
        var cName = name.map { CChar(bitPattern: $0) }
        cName.append(0)
        // No FNM_PERIOD: a leading dot is matched only by a pattern that says so
        // (".*"), and "*" then matches dotfiles too, which is what an ignore list wants.
        return fnmatch(text, cName, NamePattern.caseFold) == 0
    }

    /// glibc's `FNM_CASEFOLD`, which Swift's Glibc module leaves out (it is a GNU
    /// extension, declared only under `_GNU_SOURCE`); the value is glibc's ABI.
    static let caseFold: Int32 = 1 << 4
}
