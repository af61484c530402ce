import ContextBusObjectGraph

/// How a model maps onto SQLite tables: the naming shared by `SQLiteStore` and the predicate
/// compiler, so that compiled predicates address the columns the store created.
///
/// ```
/// table "Reading"                       one per entity
///   "Z_PK"       INTEGER PRIMARY KEY    the N of Reading/N
///   "Z_VERSION"  INTEGER NOT NULL       1 on insert, +1 per committed update
///   "value"      BLOB                   one column per attribute
///   "device"     INTEGER                a to-one relationship: the destination's Z_PK
/// table "Z_M2M_<A>_<a>"                 one per many-to-many pair, named after the side whose
///   "Z_SOURCE"   INTEGER  (A's Z_PK)    "Entity.key" sorts first
///   "Z_TARGET"   INTEGER  (B's Z_PK)
/// ```
///
/// A one-to-many pair stores the foreign key on the to-one side only; a one-to-one pair
/// stores it on both sides (kept equal). Column values: string TEXT, int INTEGER,
/// double REAL, bool INTEGER 0/1, date REAL (seconds since 1970), binary BLOB, uuid TEXT
/// (lowercase), json TEXT (serialised JSON).
public struct SQLSchema: Sendable {
    public let model: Model

    public init(model: Model) {
        self.model = model
    }

    /// The primary key column of every entity table.
    public static let primaryKeyColumn = "Z_PK"
    /// The version column of every entity table.
    public static let versionColumn = "Z_VERSION"

    /// Where the rows of a relationship live.
    public enum RelationshipStorage: Sendable, Hashable {
        /// A column of this entity's table holding the destination's `Z_PK`.
        case foreignKey(column: String)
        /// A column of the destination's table holding this object's `Z_PK` (the to-many side of one-to-many).
        case inverseForeignKey(table: String, column: String)
        /// A join table; `sourceColumn` holds this object's `Z_PK`, `targetColumn` the destination's.
        case joinTable(table: String, sourceColumn: String, targetColumn: String)
    }

    /// Quotes an identifier for SQL (`"name"`, with `"` doubled).
    public static func quote(_ identifier: String) -> String {
        // Model names rarely hold a quote; Foundation's replacement is most of a query's planning when run anyway.
        guard identifier.utf8.contains(UInt8(ascii: "\"")) else { return "\"" + identifier + "\"" }
        return "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// The (unquoted) table name of an entity.
    public func table(for entity: String) -> String { entity }

    /// The (unquoted) column name of an attribute.
    public func column(for attribute: String) -> String { attribute }

    /// Where the relationship `key` of `entity` is stored.
    ///
    /// - Precondition: the relationship exists in the model.
    public func storage(ofRelationship key: String, in entity: String) -> RelationshipStorage {
        guard let relationship = model.entity(named: entity)?.relationship(named: key),
            let inverse = model.entity(named: relationship.destination)?.relationship(named: relationship.inverse)
        else { preconditionFailure("\(entity).\(key) is not a relationship of the model") }
        switch (relationship.isToMany, inverse.isToMany) {
        case (false, _):
            return .foreignKey(column: key)
        case (true, false):
            return .inverseForeignKey(table: table(for: relationship.destination), column: inverse.name)
        case (true, true):
            let mine = "\(entity).\(key)"
            let theirs = "\(relationship.destination).\(inverse.name)"
            if mine <= theirs {
                return .joinTable(table: "Z_M2M_\(entity)_\(key)", sourceColumn: "Z_SOURCE", targetColumn: "Z_TARGET")
            } else {
                return .joinTable(
                    table: "Z_M2M_\(relationship.destination)_\(inverse.name)", sourceColumn: "Z_TARGET",
                    targetColumn: "Z_SOURCE")
            }
        }
    }
}
