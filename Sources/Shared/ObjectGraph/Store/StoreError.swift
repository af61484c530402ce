/// Why a store refused a request. Each case maps to one error code of `docs/protocol.md`.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One object whose version did not match (409's `data.conflicts` entry).
    public struct Conflict: Sendable, Hashable {
        public var id: ObjectID
        /// The version the save expected.
        public var version: Int64?
        /// The committed version; `nil` when the object no longer exists.
        public var currentVersion: Int64?
        /// The committed values; empty when the object no longer exists.
        public var currentValues: [String: PropertyValue]
        /// For an insert whose unique key a live object has (policy `error`): the insert's ID in the request; `id`
        /// is then the live object's.
        public var insert: ObjectID?
        /// For a unique-key conflict: the key's values.
        public var uniqueKey: [String: PropertyValue]?
        /// For a save that would give two objects one unique key: the other object (an insert's ID in the request
        /// when it is one); `id` is then the object the save inserts or updates.
        public var conflictsWith: ObjectID?

        public init(
            id: ObjectID, version: Int64?, currentVersion: Int64?, currentValues: [String: PropertyValue],
            insert: ObjectID? = nil, uniqueKey: [String: PropertyValue]? = nil
        ) {
            self.id = id
            self.version = version
            self.currentVersion = currentVersion
            self.currentValues = currentValues
            self.insert = insert
            self.uniqueKey = uniqueKey
        }

        /// A save that would give `id` the unique key `uniqueKey`, which `conflictsWith` has.
        public init(id: ObjectID, uniqueKey: [String: PropertyValue], conflictsWith: ObjectID) {
            self.init(id: id, version: nil, currentVersion: nil, currentValues: [:], uniqueKey: uniqueKey)
            self.conflictsWith = conflictsWith
        }
    }

    /// One failed validation rule (422's `data.errors` entry). `id` is permanent for updates and
    /// deletes, temporary (carrying the insert's `ref`) for inserts.
    public struct ValidationFailure: Sendable, Hashable, CustomStringConvertible {
        public var id: ObjectID?
        public var key: String
        public var reason: String
        public init(id: ObjectID?, key: String, reason: String) {
            self.id = id
            self.key = key
            self.reason = reason
        }
        public var description: String { "\(id.map { "\($0)." } ?? "")\(key): \(reason)" }
    }

    /// 409: versions did not match under merge policy `error`.
    case conflict([Conflict])
    /// 404: an update (or an `existingObject` lookup) names an object that does not exist.
    case notFound(ObjectID)
    /// 422: the change set breaks the model's rules; nothing was saved.
    case validation([ValidationFailure])
    /// -32602: the request does not fit the model (unknown entity or key, unbound variable…);
    /// `field` names the offending part.
    case invalidRequest(field: String, message: String)
    /// 410: the history no longer reaches back to `since`.
    case historyUnavailable(since: Int64, oldest: Int64)
    /// The database was made with another model, which cannot be read.
    case modelMismatch(stored: String, expected: String)
    /// The database was made with the model `stored`, and `expected` differs from it in ways that cannot be
    /// migrated in place: one line per difference, naming the entity and key (`MigrationStep.description`).
    /// Nothing in the file was changed.
    case migrationRefused(stored: String, expected: String, differences: [String])
    /// A request was made for the model `requested` (`"model"` in its params), and the store now serves `served`:
    /// its model changed (a migration) since the client read it. The client must read the model again (a
    /// `RemoteStore`: open a new one) before it reads or writes anything.
    case modelChanged(requested: String, served: String)
    /// The store is closed or its database is unusable.
    case unavailable(String)

    public var description: String {
        switch self {
        case .conflict(let conflicts):
            return "conflict: "
                + conflicts.map { conflict in
                    if let other = conflict.conflictsWith {
                        return
                            "\(conflict.id) would have the unique key \(Self.describe(conflict.uniqueKey)) of \(other)"
                    }
                    if let insert = conflict.insert {
                        return
                            "insert \(insert) has the unique key \(Self.describe(conflict.uniqueKey)) of \(conflict.id)"
                    }
                    return
                        "\(conflict.id) expected version \(conflict.version.map(String.init) ?? "any"), store has \(conflict.currentVersion.map(String.init) ?? "none")"
                }
                .joined(separator: "; ")
        case .notFound(let id): return "\(id) does not exist"
        case .validation(let failures):
            return "validation failed: " + failures.map(\.description).joined(separator: "; ")
        case .invalidRequest(let field, let message): return "invalid \(field): \(message)"
        case .historyUnavailable(let since, let oldest):
            return "history starts after txn \(oldest); it no longer reaches back to \(since)"
        case .modelMismatch(let stored, let expected):
            return "the database was made with model \(stored), not \(expected); refusing to open it"
        case .migrationRefused(let stored, let expected, let differences):
            return "the database was made with model \(stored), and model \(expected) differs from it in ways that "
                + "cannot be migrated in place (nothing was changed):\n"
                + differences.map { "  \($0)" }.joined(separator: "\n")
        case .modelChanged(let requested, let served):
            return "the store's model changed: it serves model \(served), not \(requested), which this client read; "
                + "read the model again (open a new RemoteStore) before using the store"
        case .unavailable(let why): return "store unavailable: \(why)"
        }
    }
}

extension StoreError {
    /// `address=AA:BB` for a unique key's values, in key order.
    fileprivate static func describe(_ key: [String: PropertyValue]?) -> String {
        (key ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }
}
