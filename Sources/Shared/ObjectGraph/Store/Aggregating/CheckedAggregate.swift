import Foundation

/// An aggregate request checked against the model, with its predicate bound and validated: what every store
/// computes (in memory, `AggregateEvaluator`; in SQL, ContextBusSQLite).
package struct CheckedAggregate {
    package let request: AggregateRequest
    package let entity: EntityDescription
    package let predicate: ObjectPredicate?
    /// The values' names in a fixed order (sorted), with their functions.
    package let values: [(name: String, function: AggregateRequest.Function)]

    /// Checks `request` against `model`.
    ///
    /// - Throws: `StoreError.invalidRequest` naming `entity`, `where`, `groupBy[i]`, `bucket.key`, `bucket.seconds`
    ///   or `values.<name>`.
    package init(_ request: AggregateRequest, model: Model) throws(StoreError) {
        guard let entity = model.entity(named: request.entity) else {
            throw .invalidRequest(field: "entity", message: "unknown entity '\(request.entity)'")
        }
        self.request = request
        self.entity = entity
        for (i, key) in request.groupBy.enumerated() {
            guard entity.attribute(named: key) != nil || entity.relationship(named: key).map({ !$0.isToMany }) == true
            else {
                throw .invalidRequest(
                    field: "groupBy[\(i)]",
                    message: "'\(key)' is not an attribute or a to-one relationship of \(entity.name)")
            }
        }
        if let bucket = request.bucket {
            guard entity.attribute(named: bucket.key)?.type == .date else {
                throw .invalidRequest(
                    field: "bucket.key", message: "'\(bucket.key)' is not a date attribute of \(entity.name)")
            }
            guard bucket.seconds > 0 else {
                throw .invalidRequest(field: "bucket.seconds", message: "must be at least 1")
            }
            guard !request.groupBy.contains(bucket.key) else {
                throw .invalidRequest(field: "bucket.key", message: "'\(bucket.key)' is also in groupBy")
            }
        }
        guard !request.values.isEmpty else {
            throw .invalidRequest(field: "values", message: "name at least one value")
        }
        var values: [(name: String, function: AggregateRequest.Function)] = []
        for (name, function) in request.values.sorted(by: { $0.key < $1.key }) {
            try Self.check(function, of: entity, field: "values.\(name)")
            values.append((name, function))
        }
        self.values = values
        predicate = try request.predicate.map { (p) throws(StoreError) in
            try StorePredicates.prepare(p, arguments: request.arguments, entity: entity.name, model: model)
        }
    }

    private static func check(
        _ function: AggregateRequest.Function, of entity: EntityDescription, field: String
    ) throws(StoreError) {
        guard let key = function.key else { return }
        if case .countOf = function {
            guard entity.attribute(named: key) != nil || entity.relationship(named: key).map({ !$0.isToMany }) == true
            else {
                throw .invalidRequest(
                    field: field, message: "'\(key)' is not an attribute or a to-one relationship of \(entity.name)")
            }
            return
        }
        guard let type = entity.attribute(named: key)?.type else {
            throw .invalidRequest(field: field, message: "'\(key)' is not an attribute of \(entity.name)")
        }
        // PROTOCOL.md, "Aggregates": `sum`, `avg`, `min`, `max` over int, double and date attributes, `min`/`max` also
        // over strings.
        let allowed: Set<AttributeType>
        switch function {
        case .sum, .average: allowed = [.int, .double, .date]
        default: allowed = [.int, .double, .date, .string]
        }
        guard allowed.contains(type) else {
            throw .invalidRequest(field: field, message: "\(function) is not defined for '\(key)', a \(type.rawValue)")
        }
    }

    /// The type of attribute `key` (`nil` for a to-one relationship).
    package func type(of key: String) -> AttributeType? { entity.attribute(named: key)?.type }

    /// The start of the bucket window holding `date`.
    package static func windowStart(of date: Date, seconds: Int64) -> Date {
        let window = (date.timeIntervalSince1970 / Double(seconds)).rounded(.down) * Double(seconds)
        return Date(timeIntervalSince1970: window)
    }
}
