import Testing

/// Records an issue at the caller's line unless `condition` is true: `#expect(condition)` written as a function.
///
/// The test modules use these functions instead of the `#expect` macro because every expansion of the macro is
/// parsed, type-checked and compiled with closures around its operands, once per build under each sanitizer; a call
/// costs the compiler far less (docs/testing.md, "Compile time of the tests"). Like `#expect`, an error thrown while
/// evaluating the condition is recorded as an issue, not thrown.
///
/// A failure reads `Expectation failed: the condition is false`, followed by the comment if given; the issue's
/// source location is the call's, so the check it names is the line the test runner points at.
public func expectTrue(
    _ condition: @autoclosure () throws -> Bool,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    checkAndRecord(comment, at: sourceLocation) { try condition() ? nil : "the condition is false" }
}

/// Records an issue at the caller's line unless `condition` is false: `#expect(!condition)` written as a function.
public func expectFalse(
    _ condition: @autoclosure () throws -> Bool,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    checkAndRecord(comment, at: sourceLocation) { try condition() ? "the condition is true" : nil }
}

/// Records `Expectation failed: <what>` at `sourceLocation` when `failure` returns what failed, nothing when it
/// returns nil; an error `failure` throws is recorded as an issue, as `#expect` records it. The one place the
/// expectation functions whose operands are autoclosures evaluate them.
package func checkAndRecord(
    _ comment: Comment?, at sourceLocation: SourceLocation, _ failure: () throws -> String?
) {
    do {
        guard let what = try failure() else { return }
        recordFailure(what, comment, at: sourceLocation)
    } catch {
        Issue.record(error, comment, sourceLocation: sourceLocation)
    }
}

/// Records `Expectation failed: <what>` and the comment, if any, at `sourceLocation`.
package func recordFailure(_ what: String, _ comment: Comment?, at sourceLocation: SourceLocation) {
    Issue.record(Comment(rawValue: failureMessage(what, comment: comment)), sourceLocation: sourceLocation)
}

/// The text of an expectation's issue: `Expectation failed: <what>`, then `: <comment>` if there is one.
package func failureMessage(_ what: String, comment: Comment?) -> String {
    let message = "Expectation failed: \(what)"
    guard let comment else { return message }
    return "\(message): \(comment.rawValue)"
}
