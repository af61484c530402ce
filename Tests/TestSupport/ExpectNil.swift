import Testing

/// Records an issue at the caller's line unless `value` is nil: `#expect(value == nil)` written as a function
/// (see `expectTrue` for why). A failure names the value that is there.
public func expectNil<Wrapped>(
    _ value: @autoclosure () throws -> Wrapped?,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        guard let value = try value() else { return }
        recordFailure("\(value) is not nil", comment, at: sourceLocation)
    } catch {
        Issue.record(error, comment, sourceLocation: sourceLocation)
    }
}

/// Records an issue at the caller's line when `value` is nil: `#expect(value != nil)` written as a function.
public func expectNotNil<Wrapped>(
    _ value: @autoclosure () throws -> Wrapped?,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        guard try value() == nil else { return }
        recordFailure("the value is nil", comment, at: sourceLocation)
    } catch {
        Issue.record(error, comment, sourceLocation: sourceLocation)
    }
}
