import ContextBusObjectGraph

/// A piece of SQL with `?` placeholders, and the values to bind to them in order.
///
/// Values are bound by the store following `SQLSchema`'s storage conventions (date → REAL
/// seconds since 1970, bool → INTEGER 0/1, uuid → lowercase TEXT, binary → BLOB, …); they
/// never appear in `sql`.
public struct SQLFragment: Sendable, Hashable {
    public var sql: String
    public var bindings: [PropertyValue]

    public init(sql: String, bindings: [PropertyValue] = []) {
        self.sql = sql
        self.bindings = bindings
    }
}
