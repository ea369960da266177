import Foundation

/// What this process holds open beneath `path`, `path` itself included: the
/// targets of the links in /proc/self/fd that name `path` or something below it,
/// sorted. Other tests run at the same time and hold descriptors too, but none
/// beneath a directory made for one test alone (a `Scratch`), so the answer is
/// exact. `path` must be canonical, as /proc/self/fd names it.
public func descriptorsOpen(beneath path: String) -> [String] {
    let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return numbers.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
        .filter { $0 == path || $0.hasPrefix(path + "/") }
        .sorted()
}
