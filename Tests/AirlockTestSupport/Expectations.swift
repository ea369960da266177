// Swift Testing is there only when the tests are built: `swift build` of the
// programs (release included) builds this target too, without it.
#if canImport(Testing)
import Testing

// The tests assert through these two functions rather than the `#expect` macro.
// Each `#expect` expands into generic closures around its operands, and
// type-checking those expansions was most of the time a cold `make test` spent
// building the tests: the end-to-end target's 1,492 of them alone cost 18 of the
// 57 s of processor time it took to compile. A failure still says what it must:
// both values of an equality, the comment, and the caller's line.
// (`#require`, which unwraps, and `#expect(throws:)` stay macros.)

/// Records an issue at the caller's line, with both values, unless `actual == expected`.
public func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ comment: @autoclosure () -> String = "",
                                      sourceLocation: SourceLocation = #_sourceLocation) {
    guard actual != expected else { return }
    let said = comment()
    let values = "\(String(reflecting: actual)) is not \(String(reflecting: expected))"
    Issue.record(Comment(rawValue: said.isEmpty ? values : "\(values): \(said)"), sourceLocation: sourceLocation)
}

/// Records an issue at the caller's line unless `condition` holds.
public func expect(_ condition: Bool, _ comment: @autoclosure () -> String = "",
                  sourceLocation: SourceLocation = #_sourceLocation) {
    guard !condition else { return }
    let said = comment()
    Issue.record(Comment(rawValue: said.isEmpty ? "the condition does not hold" : said), sourceLocation: sourceLocation)
}
#endif
