/// The one place where the stores call the predicate API (`ObjectPredicate.binding`, `validate`,
/// `evaluate`; and, in ContextBusSQLite, `PredicateSQLCompiler`, `PredicateSQLFunctions`), mapping its errors to
/// `StoreError.invalidRequest(field: "where", …)`.
///
/// The stores only go through this type.
package enum StorePredicates {
    /// Binds `arguments` into `predicate` and checks it against `entity`.
    package static func prepare(
        _ predicate: ObjectPredicate, arguments: [String: PropertyValue], entity: String, model: Model
    ) throws(StoreError) -> ObjectPredicate {
        do {
            let bound = try predicate.binding(arguments)
            try bound.validate(for: entity, in: model)
            return bound
        } catch {
            throw invalid(error)
        }
    }

    /// An evaluator of a prepared predicate, to test many objects of `entity` in memory.
    package static func evaluator(
        _ predicate: ObjectPredicate, entity: String, model: Model
    ) throws(StoreError) -> PredicateEvaluator {
        do {
            return try PredicateEvaluator(predicate, entity: entity, in: model)
        } catch {
            throw invalid(error)
        }
    }

    package static func invalid(_ error: ObjectPredicateError) -> StoreError {
        .invalidRequest(field: "where", message: error.description)
    }
}
