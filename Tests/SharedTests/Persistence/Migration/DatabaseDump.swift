import CContextBusSQLite
import Foundation

@testable import ContextBusSQLite

/// A database file as text: its schema (every table and index as SQLite keeps its SQL) and every row of every
/// table, in key order, each value with its storage class. Two files with the same dump hold the same data under
/// the same schema, whatever their page layout.
///
/// `Z_HISTORY.Z_TIME` is left out: it is the time each transaction committed, which a rebuilt fixture cannot
/// reproduce.
enum DatabaseDump {
    /// The dump of the database at `url` (opened read-only).
    static func lines(of url: URL) throws -> [String] {
        let connection = try SQLiteConnection(path: url.path, readOnly: true, busyTimeoutMilliseconds: 1_000)
        defer { connection.close() }
        var lines: [String] = []
        var tables: [String] = []
        let schema = try connection.uncachedStatement(
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name")
        while try schema.step() {
            let type = schema.text(at: 0)
            lines.append(
                "\(type) \(schema.text(at: 1)) on \(schema.text(at: 2)): \(schema.isNull(at: 3) ? "-" : schema.text(at: 3))"
            )
            if type == "table" { tables.append(schema.text(at: 1)) }
        }
        for table in tables {
            let rows = try connection.uncachedStatement("SELECT * FROM \"\(table)\" ORDER BY 1, 2")
            let count = sqlite3_column_count(rows.handle)
            while try rows.step() {
                var values: [String] = []
                for column in 0..<count {
                    let name = String(cString: sqlite3_column_name(rows.handle, column))
                    if table == "Z_HISTORY" && name == "Z_TIME" { continue }
                    if table == "Z_HISTORY" && name == "Z_CHANGES" {
                        // Written from dictionaries, whose order differs from run to run: compared as JSON.
                        let json = StoredJSON.parse(rows.text(at: column))
                        values.append("\(name)=\(json.flatMap { try? StoredJSON.writer.string($0) } ?? "not JSON")")
                        continue
                    }
                    values.append("\(name)=\(text(of: rows, at: column))")
                }
                lines.append("row \(table): \(values.joined(separator: " "))")
            }
        }
        return lines
    }

    private static func text(of statement: SQLiteStatement, at column: Int32) -> String {
        switch sqlite3_column_type(statement.handle, column) {
        case SQLITE_NULL: return "NULL"
        case SQLITE_INTEGER: return "\(statement.int64(at: column))"
        case SQLITE_FLOAT: return "real:\(statement.double(at: column))"
        case SQLITE_BLOB: return "blob:\(statement.data(at: column).map { String(format: "%02x", $0) }.joined())"
        default: return "text:\(statement.text(at: column).debugDescription)"
        }
    }
}
