import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// Binding and reading `PropertyValue`s by the storage conventions of `SQLSchema`: string TEXT,
/// int INTEGER, double REAL, bool INTEGER 0/1, date REAL (seconds since 1970), binary BLOB,
/// uuid TEXT (lowercase), json TEXT (compact JSON with sorted keys, `StoredJSON`), to-one INTEGER (the destination's `Z_PK`).
extension SQLiteStatement {
    /// Binds `value` at the 1-based `index`.
    ///
    /// - Precondition: `value` is not `.references` (a to-many has no column) and a reference is permanent.
    func bind(_ value: PropertyValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .string(let s): try bind(s, at: index)
        case .int(let i): try bind(i, at: index)
        case .double(let d): try bind(d, at: index)
        case .bool(let b): try bind(Int64(b ? 1 : 0), at: index)
        case .date(let d): try bind(d.timeIntervalSince1970, at: index)
        case .binary(let data): try bind(data, at: index)
        case .uuid(let u): try bind(u.uuidString.lowercased(), at: index)
        case .json(let j):
            var text: [UInt8] = []
            StoredJSON.write(j, into: &text)
            try bind(utf8: text, at: index)
        case .reference(let id):
            guard let number = id.number else { preconditionFailure("cannot store temporary ID \(id)") }
            try bind(number, at: index)
        case .references: preconditionFailure("a to-many relationship has no column")
        }
    }

    /// Reads the 0-based `column` as an attribute of `type`.
    func propertyValue(at column: Int32, type: AttributeType) -> PropertyValue {
        guard !isNull(at: column) else { return .null }
        switch type {
        case .string: return .string(text(at: column))
        case .int: return .int(int64(at: column))
        case .double: return .double(double(at: column))
        case .bool: return .bool(int64(at: column) != 0)
        case .date: return .date(Date(timeIntervalSince1970: double(at: column)))
        case .binary: return .binary(data(at: column))
        case .uuid: return UUID(uuidString: text(at: column)).map(PropertyValue.uuid) ?? .null
        case .json: return StoredJSON.parse(text(at: column)).map(PropertyValue.json) ?? .null
        }
    }

    /// Reads the 0-based `column` as a to-one relationship to `entity`.
    func reference(at column: Int32, entity: String) -> PropertyValue {
        isNull(at: column) ? .null : .reference(ObjectID(entity: entity, number: int64(at: column)))
    }
}
