import Foundation

/// A directory of one test's own, made empty (mode 0700) in the temporary
/// directory and named by its canonical path, as /proc/self/fd names what is
/// open beneath it; removed with everything in it when the last reference goes.
public final class Scratch {
    /// Why a scratch directory could not be made: the call that failed and its errno.
    public struct Failure: Error, CustomStringConvertible {
        public let operation: String
        public let code: Int32
        public var description: String { "\(operation): \(String(cString: strerror(code)))" }

        public init(operation: String, code: Int32) {
            self.operation = operation
            self.code = code
        }
    }

    /// The directory's canonical path.
    public let path: String

    /// Makes `airlock-<label>.XXXXXX` in the temporary directory; the label says
    /// which test a directory left behind by a crash belongs to.
    public init(_ label: String) throws {
        var template = Array((NSTemporaryDirectory() + "/airlock-\(label).XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw Failure(operation: "mkdtemp", code: errno) }
        guard let canonical = realpath(made, nil) else {
            let code = errno
            rmdir(made)
            throw Failure(operation: "realpath", code: code)
        }
        defer { free(canonical) }
        path = String(cString: canonical)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
