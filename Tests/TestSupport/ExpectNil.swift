import Testing

/// Records an issue at the caller's line unless `value` is nil: `#expect(value == nil)` written as a function
/// (see `expectTrue` for why). A failure names the value that is there.
public func expectNil<Wrapped>(
    _ value: @autoclosure () throws -> Wrapped?,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    checkAndRecord(comment, at: sourceLocation) { try value().map { "\($0) is not nil" } }
}

/// Records an issue at the caller's line when `value` is nil: `#expect(value != nil)` written as a function.
public func expectNotNil<Wrapped>(
    _ value: @autoclosure () throws -> Wrapped?,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    checkAndRecord(comment, at: sourceLocation) { try value() == nil ? "the value is nil" : nil }
}
