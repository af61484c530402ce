import Testing

/// Records an issue at the caller's line unless `collection` is empty: `#expect(collection.isEmpty)` written as a
/// function (see `expectTrue` for why). A failure shows what the collection holds.
public func expectEmpty<C: Collection>(
    _ collection: @autoclosure () throws -> C,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let collection = try collection()
        guard !collection.isEmpty else { return }
        recordFailure("\(collection) is not empty", comment, at: sourceLocation)
    } catch {
        Issue.record(error, comment, sourceLocation: sourceLocation)
    }
}
