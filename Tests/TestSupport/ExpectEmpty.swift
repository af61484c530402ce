import Testing

/// Records an issue at the caller's line unless `collection` is empty: `#expect(collection.isEmpty)` written as a
/// function (see `expectTrue` for why). A failure shows what the collection holds.
public func expectEmpty<C: Collection>(
    _ collection: @autoclosure () throws -> C,
    _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    checkAndRecord(comment, at: sourceLocation) {
        let collection = try collection()
        return collection.isEmpty ? nil : "\(collection) is not empty"
    }
}
