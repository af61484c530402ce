/// A fetch request checked against the model, with its predicate bound and validated: what both
/// stores execute.
package struct CheckedFetch {
    /// One sort key: the to-one relationships to follow, then the attribute to compare.
    package struct SortKey {
        package var relationships: [RelationshipDescription]
        package var attribute: AttributeDescription
        package var ascending: Bool
    }

    package let entity: EntityDescription
    package let predicate: ObjectPredicate?
    package let sortKeys: [SortKey]
    package let limit: Int?
    package let offset: Int
    package let resultType: FetchRequest.ResultType

    /// Checks `request` against `model`.
    ///
    /// - Throws: `StoreError.invalidRequest` naming `entity`, `where`, `sort[i].key`, `limit` or `offset`.
    package init(_ request: FetchRequest, model: Model) throws(StoreError) {
        guard let entity = model.entity(named: request.entity) else {
            throw .invalidRequest(field: "entity", message: "unknown entity '\(request.entity)'")
        }
        self.entity = entity
        if let limit = request.fetchLimit, limit < 0 {
            throw .invalidRequest(field: "limit", message: "must not be negative")
        }
        guard request.fetchOffset >= 0 else { throw .invalidRequest(field: "offset", message: "must not be negative") }
        limit = request.fetchLimit
        offset = request.fetchOffset
        resultType = request.resultType
        var sortKeys: [SortKey] = []
        for (i, descriptor) in request.sortDescriptors.enumerated() {
            sortKeys.append(try Self.sortKey(descriptor, from: entity, model: model, field: "sort[\(i)].key"))
        }
        self.sortKeys = sortKeys
        predicate = try request.predicate.map { (p) throws(StoreError) in
            try StorePredicates.prepare(p, arguments: request.arguments, entity: entity.name, model: model)
        }
    }

    private static func sortKey(
        _ descriptor: ObjectSortDescriptor, from entity: EntityDescription, model: Model, field: String
    ) throws(StoreError) -> SortKey {
        let path = descriptor.keyPath.joined(separator: ".")
        guard let last = descriptor.keyPath.last else { throw .invalidRequest(field: field, message: "empty key path") }
        var current = entity
        var relationships: [RelationshipDescription] = []
        for key in descriptor.keyPath.dropLast() {
            guard let relationship = current.relationship(named: key), !relationship.isToMany else {
                throw .invalidRequest(
                    field: field, message: "'\(path)': \(current.name).\(key) is not a to-one relationship")
            }
            relationships.append(relationship)
            current = model.entity(named: relationship.destination)!
        }
        guard let attribute = current.attribute(named: last) else {
            throw .invalidRequest(field: field, message: "'\(path)': \(current.name) has no attribute '\(last)'")
        }
        return SortKey(relationships: relationships, attribute: attribute, ascending: descriptor.ascending)
    }

    /// Applies offset and limit to a count of matching objects.
    package func window(ofCount count: Int) -> Int {
        let afterOffset = max(count - offset, 0)
        return limit.map { min($0, afterOffset) } ?? afterOffset
    }
}
