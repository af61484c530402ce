import CContextBusSQLite
import Foundation

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// A test-only SQLite database with the predicate functions registered and tables made by
/// hand from `SQLSchema`'s conventions: one table per entity (`Z_PK`, `Z_VERSION`, one column
/// per attribute, one per to-one relationship) and one join table per many-to-many pair.
final class PredicateTestDatabase {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    let schema: SQLSchema
    private var db: OpaquePointer?

    init(model: Model) throws {
        schema = SQLSchema(model: model)
        guard sqlite3_open(":memory:", &db) == SQLITE_OK, let db else { throw Failure(description: "open failed") }
        try PredicateSQLFunctions.register(on: db)
        try createTables()
    }

    deinit { sqlite3_close(db) }

    private static func columnType(_ type: AttributeType) -> String {
        switch type {
        case .string, .uuid, .json: return "TEXT"
        case .int, .bool: return "INTEGER"
        case .double, .date: return "REAL"
        case .binary: return "BLOB"
        }
    }

    private func createTables() throws {
        var joinTables: Set<String> = []
        for entity in schema.model.entities {
            var columns = [
                "\(SQLSchema.quote(SQLSchema.primaryKeyColumn)) INTEGER PRIMARY KEY",
                "\(SQLSchema.quote(SQLSchema.versionColumn)) INTEGER NOT NULL",
            ]
            for attribute in entity.attributes {
                columns.append(
                    "\(SQLSchema.quote(schema.column(for: attribute.name))) \(Self.columnType(attribute.type))")
            }
            for relationship in entity.relationships {
                switch schema.storage(ofRelationship: relationship.name, in: entity.name) {
                case .foreignKey(let column): columns.append("\(SQLSchema.quote(column)) INTEGER")
                case .inverseForeignKey: break
                case .joinTable(let table, _, _): joinTables.insert(table)
                }
            }
            try execute(
                "CREATE TABLE \(SQLSchema.quote(schema.table(for: entity.name))) (\(columns.joined(separator: ", ")))")
        }
        for table in joinTables {
            try execute("CREATE TABLE \(SQLSchema.quote(table)) (\"Z_SOURCE\" INTEGER, \"Z_TARGET\" INTEGER)")
        }
    }

    /// Inserts an object: its attributes and to-one relationships as columns, and the join
    /// rows of many-to-many relationships whose join table names this entity as the source.
    func insert(_ id: ObjectID, _ values: [String: PropertyValue]) throws {
        guard let entity = schema.model.entity(named: id.entity), let number = id.number else {
            throw Failure(description: "bad id \(id)")
        }
        var columns = [SQLSchema.primaryKeyColumn, SQLSchema.versionColumn]
        var bindings: [PropertyValue] = [.int(number), .int(1)]
        for attribute in entity.attributes {
            columns.append(schema.column(for: attribute.name))
            bindings.append(values[attribute.name] ?? .null)
        }
        for relationship in entity.relationships {
            switch schema.storage(ofRelationship: relationship.name, in: entity.name) {
            case .foreignKey(let column):
                columns.append(column)
                bindings.append(values[relationship.name] ?? .null)
            case .inverseForeignKey:
                break
            case .joinTable(let table, let source, let target):
                guard source == "Z_SOURCE", case .references(let ids)? = values[relationship.name] else { break }
                for other in ids {
                    try run(
                        "INSERT INTO \(SQLSchema.quote(table)) (\"\(source)\", \"\(target)\") VALUES (?, ?)",
                        [.int(number), .int(other.number!)])
                }
            }
        }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try run(
            "INSERT INTO \(SQLSchema.quote(schema.table(for: entity.name))) "
                + "(\(columns.map(SQLSchema.quote).joined(separator: ", "))) VALUES (\(placeholders))",
            bindings)
    }

    /// The `Z_PK`s of the rows of `entity` that the fragment (compiled with alias `t`) selects.
    func select(_ entity: String, where fragment: SQLFragment) throws -> Set<Int64> {
        let sql =
            "SELECT \"t\".\"Z_PK\" FROM \(SQLSchema.quote(schema.table(for: entity))) AS \"t\" WHERE \(fragment.sql)"
        return Set(try rows(sql, fragment.bindings).map { $0 as? Int64 ?? -1 })
    }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &message) == SQLITE_OK else {
            defer { sqlite3_free(message) }
            throw Failure(description: "\(String(cString: message!)) in \(sql)")
        }
    }

    func run(_ sql: String, _ bindings: [PropertyValue]) throws {
        _ = try rows(sql, bindings)
    }

    /// Every row's first column, as Int64, Double, String, Data or nil.
    func rows(_ sql: String, _ bindings: [PropertyValue]) throws -> [Any?] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw Failure(description: "\(String(cString: sqlite3_errmsg(db))) in \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        for (i, value) in bindings.enumerated() { try Self.bind(value, at: Int32(i + 1), in: statement) }
        var result: [Any?] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { return result }
            guard rc == SQLITE_ROW else {
                throw Failure(description: "\(String(cString: sqlite3_errmsg(db))) in \(sql)")
            }
            switch sqlite3_column_type(statement, 0) {
            case SQLITE_INTEGER: result.append(sqlite3_column_int64(statement, 0))
            case SQLITE_FLOAT: result.append(sqlite3_column_double(statement, 0))
            case SQLITE_TEXT: result.append(String(cString: sqlite3_column_text(statement, 0)))
            case SQLITE_BLOB:
                let count = Int(sqlite3_column_bytes(statement, 0))
                result.append(count == 0 ? Data() : Data(bytes: sqlite3_column_blob(statement, 0), count: count))
            default: result.append(nil)
            }
        }
    }

    /// Binds one value following `SQLSchema`'s storage conventions.
    static func bind(_ value: PropertyValue, at index: Int32, in statement: OpaquePointer?) throws {
        func text(_ s: String) -> Int32 {
            let bytes = Array(s.utf8)
            if bytes.isEmpty { return sqlite3_bind_text(statement, index, "", 0, csqlite_transient()) }
            return bytes.withUnsafeBytes { raw in
                sqlite3_bind_text(
                    statement, index, raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                    csqlite_transient())
            }
        }
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(statement, index)
        case .string(let s): rc = text(s)
        case .int(let i): rc = sqlite3_bind_int64(statement, index, i)
        case .double(let d): rc = sqlite3_bind_double(statement, index, d)
        case .bool(let b): rc = sqlite3_bind_int64(statement, index, b ? 1 : 0)
        case .date(let d): rc = sqlite3_bind_double(statement, index, d.timeIntervalSince1970)
        case .binary(let data):
            if data.isEmpty {
                rc = sqlite3_bind_zeroblob(statement, index, 0)
            } else {
                rc = data.withUnsafeBytes {
                    sqlite3_bind_blob(statement, index, $0.baseAddress, Int32(data.count), csqlite_transient())
                }
            }
        case .uuid(let u): rc = text(u.uuidString.lowercased())
        case .json(let j):
            var json: [UInt8] = []
            StoredJSON.write(j, into: &json)  // as the store binds a json value
            rc = text(String(decoding: json, as: UTF8.self))
        case .reference(let id): rc = sqlite3_bind_int64(statement, index, id.number ?? 0)
        case .references: throw Failure(description: "a to-many value cannot be bound")
        }
        guard rc == SQLITE_OK else { throw Failure(description: "bind \(value) failed: \(rc)") }
    }
}
