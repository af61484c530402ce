import Testing

/// Records an issue at the caller's line unless `actual == expected`: what `#expect(actual == expected)` checks,
/// written as a function.
///
/// The test modules use it for their thousands of one-line equality checks because a call costs the compiler one
/// generic call to type-check, where each `#expect(a == b)` expands into a call taking closures over the
/// comparison, and those expansions were about a fifth of the test modules' compile time, paid once per build under
/// each sanitizer (docs/testing.md, "Compile time of the tests"). The other checks have functions of their own
/// (`expectTrue`, `expectNil`, `expectEmpty`, `expectLessThan`, …); `#expect` stays for `throws:`, exit tests and
/// conditions that `await`.
///
/// A failure reads `Expectation failed: 3 is not equal to 4 (actual, expected)`, followed by the comment if given.
public func expectEqual<Value: Equatable>(
    _ actual: Value,
    _ expected: Value,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    Issue.record(
        Comment(rawValue: unequalMessage(actual, expected, comment: comment)),
        sourceLocation: sourceLocation
    )
}

/// The text of `expectEqual`'s issue: both values as `String(describing:)` writes them, then the comment.
package func unequalMessage<Value>(_ actual: Value, _ expected: Value, comment: Comment?) -> String {
    failureMessage("\(actual) is not equal to \(expected) (actual, expected)", comment: comment)
}
