import Synchronization

/// The identity of a managed object: permanent `Entity/N` once saved, temporary before.
///
/// Permanent IDs are assigned by the store at commit, never reused. A temporary ID is unique
/// within this process; on the wire it travels as the `ref` of an insert.
public struct ObjectID: Sendable, Hashable {
    /// Where the ID comes from.
    public enum Kind: Sendable, Hashable {
        /// Assigned by the store: the row number of the object.
        case permanent(Int64)
        /// Assigned by a context for an unsaved insert: a name unique in this process.
        case temporary(String)
    }

    /// The entity of the object.
    public let entity: String
    /// Permanent or temporary.
    public let kind: Kind

    /// A permanent ID.
    public init(entity: String, number: Int64) {
        self.entity = entity
        self.kind = .permanent(number)
    }

    /// A temporary ID with the given reference name (a save's `ref`).
    public init(entity: String, temporaryReference: String) {
        self.entity = entity
        self.kind = .temporary(temporaryReference)
    }

    /// A new temporary ID, unique in this process.
    public static func makeTemporary(entity: String) -> ObjectID {
        let n = temporaryCounter.add(1, ordering: .relaxed).newValue
        return ObjectID(entity: entity, temporaryReference: "t\(n)")
    }

    /// Whether the store has not assigned this ID yet.
    public var isTemporary: Bool {
        if case .temporary = kind { return true }
        return false
    }

    /// The row number of a permanent ID.
    public var number: Int64? {
        if case .permanent(let n) = kind { return n }
        return nil
    }

    /// The reference name of a temporary ID.
    public var temporaryReference: String? {
        if case .temporary(let r) = kind { return r }
        return nil
    }

    /// Parses the permanent form `Entity/N`.
    public init?(string: String) {
        guard let slash = string.lastIndex(of: "/") else { return nil }
        let entity = String(string[..<slash])
        guard !entity.isEmpty, let n = Int64(string[string.index(after: slash)...]), n > 0 else { return nil }
        self.init(entity: entity, number: n)
    }
}

private let temporaryCounter = Atomic<Int64>(0)

extension ObjectID: CustomStringConvertible {
    /// `Entity/N` for a permanent ID, `Entity/ref` (for example `Reading/t12`) for a temporary one.
    public var description: String {
        switch kind {
        case .permanent(let n): return "\(entity)/\(n)"
        case .temporary(let r): return "\(entity)/\(r)"
        }
    }
}

extension ObjectID: Comparable {
    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool {
        if lhs.entity != rhs.entity { return lhs.entity < rhs.entity }
        switch (lhs.kind, rhs.kind) {
        case (.permanent(let a), .permanent(let b)): return a < b
        case (.permanent, .temporary): return true
        case (.temporary, .permanent): return false
        case (.temporary(let a), .temporary(let b)): return a < b
        }
    }
}

extension ObjectID: Codable {
    /// Permanent IDs code as the string `Entity/N`; temporary ones as `{"entity":…,"ref":…}`.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let s = try? single.decode(String.self) {
            guard let id = ObjectID(string: s) else {
                throw DecodingError.dataCorruptedError(
                    in: single, debugDescription: "'\(s)' is not an object ID of the form Entity/N")
            }
            self = id
            return
        }
        let container = try decoder.container(keyedBy: TemporaryKeys.self)
        self.init(
            entity: try container.decode(String.self, forKey: .entity),
            temporaryReference: try container.decode(String.self, forKey: .ref))
    }

    public func encode(to encoder: any Encoder) throws {
        switch kind {
        case .permanent:
            var container = encoder.singleValueContainer()
            try container.encode(description)
        case .temporary(let ref):
            var container = encoder.container(keyedBy: TemporaryKeys.self)
            try container.encode(entity, forKey: .entity)
            try container.encode(ref, forKey: .ref)
        }
    }

    private enum TemporaryKeys: String, CodingKey {
        case entity, ref
    }
}
