extension ManagedEntity {
    /// The object of this entity whose keys hold exactly `values`, in `context` (its unsaved changes included), or
    /// `nil`: the lookup behind a generated type's `find(…, in:)` for each of the model's `uniqueBy` sets, where at
    /// most one live object can match.
    ///
    /// A to-one relationship's value is `.reference(id)`; no value may be `null` (`null` never collides, so it
    /// finds nothing unique). With several matches (keys that are not a `uniqueBy` set) the one with the lowest
    /// object ID is returned.
    ///
    /// - Throws: as `fetch(_:)`: `StoreError.invalidRequest` for a key the entity does not have.
    public static func unique(
        matching values: KeyValuePairs<String, PropertyValue>, in context: ObjectContext
    ) throws -> Self? {
        let comparisons = values.map { key, value in
            ObjectPredicate.comparison(.init(.keyPath([key]), .equal, .literal(value)))
        }
        let request = TypedFetchRequest<Self>(predicate: .and(comparisons), limit: 1)
        return try context.fetch(request).first
    }
}
