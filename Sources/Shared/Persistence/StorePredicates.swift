/// The one place where the stores call the predicate API (`Predicate.binding`, `validate`,
/// `evaluate`, `PredicateSQLCompiler`, `PredicateSQLFunctions`), mapping its errors to
/// `StoreError.invalidRequest(field: "where", …)`.
///
/// Until the predicate branch is merged, predicates are refused with that error; the stores
/// themselves only go through this type.
enum StorePredicates {
    /// Binds `arguments` into `predicate` and checks it against `entity`.
    static func prepare(
        _ predicate: Predicate, arguments: [String: PropertyValue], entity: String, model: Model
    ) throws(StoreError) -> Predicate {
        throw unavailable
    }

    /// Whether an object with `values` matches a prepared predicate.
    static func matches(
        _ predicate: Predicate, values: [String: PropertyValue], entity: String, model: Model,
        lookup: (ObjectID) -> [String: PropertyValue]?
    ) throws(StoreError) -> Bool {
        throw unavailable
    }

    /// Compiles a prepared predicate to a SQL condition over the table aliased `alias`.
    static func sql(
        _ predicate: Predicate, entity: String, schema: SQLSchema, alias: String
    ) throws(StoreError) -> (sql: String, bindings: [PropertyValue]) {
        throw unavailable
    }

    /// Registers the SQL functions compiled predicates call (`MATCHES`, `[cd]` folding) on a connection.
    static func registerFunctions(on db: OpaquePointer) throws {}

    private static let unavailable = StoreError.invalidRequest(
        field: "where", message: "predicates are not available in this build")
}
