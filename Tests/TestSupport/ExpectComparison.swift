import Testing

/// Records an issue at the caller's line unless `actual != unexpected`: `#expect(actual != unexpected)` written as
/// a function (see `expectTrue` for why). A failure names the value.
public func expectNotEqual<Value: Equatable>(
    _ actual: Value,
    _ unexpected: Value,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual == unexpected else { return }
    recordFailure("\(actual) is equal to \(unexpected)", comment, at: sourceLocation)
}

/// Records an issue at the caller's line unless `lhs < rhs`: `#expect(lhs < rhs)` written as a function. A failure
/// names both values.
public func expectLessThan<Value: Comparable>(
    _ lhs: Value, _ rhs: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard !(lhs < rhs) else { return }
    recordFailure("\(lhs) is not less than \(rhs)", comment, at: sourceLocation)
}

/// Records an issue at the caller's line unless `lhs <= rhs`.
public func expectLessThanOrEqual<Value: Comparable>(
    _ lhs: Value, _ rhs: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard !(lhs <= rhs) else { return }
    recordFailure("\(lhs) is greater than \(rhs)", comment, at: sourceLocation)
}

/// Records an issue at the caller's line unless `lhs > rhs`.
public func expectGreaterThan<Value: Comparable>(
    _ lhs: Value, _ rhs: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard !(lhs > rhs) else { return }
    recordFailure("\(lhs) is not greater than \(rhs)", comment, at: sourceLocation)
}

/// Records an issue at the caller's line unless `lhs >= rhs`.
public func expectGreaterThanOrEqual<Value: Comparable>(
    _ lhs: Value, _ rhs: Value, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard !(lhs >= rhs) else { return }
    recordFailure("\(lhs) is less than \(rhs)", comment, at: sourceLocation)
}
