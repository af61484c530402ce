import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// A store's state as a fleet member, in its own database (docs/fleet.md, "State in the store"), kept by the
/// writer: used only on the writer's queue, except the `static` reads, which take a reader's connection.
///
/// Tables, made when the store is first registered (`register`), so a store that never joins a fleet has none:
///
/// ```
/// Z_REPLICA_ORIGIN  Z_GATEWAY (key) | Z_TXN | Z_POSITION     highest applied transaction per other gateway
/// Z_REPLICA_ID      Z_FLEET (key) | Z_ENTITY | Z_PK | Z_ORIGINAL   fleet-wide ID → local object (kept after a delete)
/// Z_REPLICA_CLOCK   Z_ENTITY, Z_PK (key) | Z_CLOCKS            the clock of each key's last write, as JSON
/// Z_METADATA        replicaGateway, replicaPublished, replicaPosition
/// ```
///
/// `Z_ORIGINAL` is 1 when the row's gateway inserted the object here, 0 when the ID was merged into an object that
/// already had another (a unique key). `Z_CLOCKS` is `{"*":[clock,"gateway"],"key":[clock,"gateway"]}`, `*` being
/// the clock of every key not named (an insert's). Only updates and inserts of entities with unique keys need
/// clocks: any other insert has no concurrent write (a gateway writes an object only after its insert).
final class SQLiteReplica {
    static let originTable = "Z_REPLICA_ORIGIN"
    static let idTable = "Z_REPLICA_ID"
    static let clockTable = "Z_REPLICA_CLOCK"

    /// The registered gateway name; `nil` while the store is not a fleet member (nothing is recorded then).
    private(set) var gateway: String?
    private(set) var published: Int64 = 0
    /// The last clock handed to a commit (microseconds since 1970).
    private var lastClock: Int64 = 0
    /// Whether the transaction being built has written replica rows (an applied transaction that changes
    /// nothing still records its origin, so the group must commit).
    var hasUncommittedRows = false

    private let model: Model
    /// The model, for `ReplicaResolver`.
    var modelForResolving: Model { model }

    init(model: Model, connection: SQLiteConnection) throws {
        self.model = model
        guard try Self.tablesExist(on: connection) else { return }
        gateway = try SQLiteSchemaSetup.metadata("replicaGateway", on: connection)
        published = Int64(try SQLiteSchemaSetup.metadata("replicaPublished", on: connection) ?? "0") ?? 0
        let newest = try connection.integer(
            "SELECT CAST(MAX(\"Z_TIME\") * 1000000 AS INTEGER) FROM \"\(SQLiteSchemaSetup.historyTable)\"")
        lastClock = (newest ?? 0) + Self.referenceDateOffset
    }

    /// Microseconds between 1970 and 2001 (the history's times are seconds since 2001).
    static let referenceDateOffset = Int64(Date.timeIntervalBetween1970AndReferenceDate * 1_000_000)

    /// The clock of a commit time (microseconds since 1970).
    static func clock(of time: Date) -> Int64 {
        Int64((time.timeIntervalSince1970 * 1_000_000).rounded())
    }

    static func tablesExist(on connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        try connection.integer(
            "SELECT COUNT(*) FROM \"sqlite_master\" WHERE \"type\" = 'table' AND \"name\" = ?",
            [.string(originTable)]) == 1
    }

    // MARK: - Registration and progress (each in a transaction of its own, on the writer's queue)

    func register(_ name: String, on connection: SQLiteConnection) throws {
        if let gateway {
            guard gateway == name else {
                throw StoreError.invalidRequest(
                    field: "gateway", message: "this store is registered as gateway '\(gateway)', not '\(name)'")
            }
            return
        }
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS "\(Self.originTable)" ("Z_GATEWAY" TEXT PRIMARY KEY, "Z_TXN" INTEGER NOT NULL,
                "Z_POSITION" INTEGER NOT NULL);
            CREATE TABLE IF NOT EXISTS "\(Self.idTable)" ("Z_FLEET" TEXT PRIMARY KEY, "Z_ENTITY" TEXT NOT NULL,
                "Z_PK" INTEGER NOT NULL, "Z_ORIGINAL" INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS "Z_REPLICA_ID_LOCAL" ON "\(Self.idTable)" ("Z_ENTITY", "Z_PK");
            CREATE TABLE IF NOT EXISTS "\(Self.clockTable)" ("Z_ENTITY" TEXT NOT NULL, "Z_PK" INTEGER NOT NULL,
                "Z_CLOCKS" TEXT NOT NULL, PRIMARY KEY ("Z_ENTITY", "Z_PK")) WITHOUT ROWID;
            """)
        try SQLiteSchemaSetup.setMetadata("replicaGateway", .string(name), on: connection)
        try SQLiteSchemaSetup.setMetadata("replicaPublished", .string("0"), on: connection)
        try SQLiteSchemaSetup.setMetadata("replicaPosition", .string("0"), on: connection)
        gateway = name
        published = 0
    }

    func recordProgress(published newPublished: Int64?, position: Int64?, on connection: SQLiteConnection) throws {
        guard gateway != nil else {
            throw StoreError.invalidRequest(field: "gateway", message: "the store is not registered as a gateway")
        }
        if let newPublished, newPublished > published {
            try SQLiteSchemaSetup.setMetadata("replicaPublished", .string(String(newPublished)), on: connection)
            published = newPublished
        }
        if let position {
            let current = Int64(try SQLiteSchemaSetup.metadata("replicaPosition", on: connection) ?? "0") ?? 0
            if position > current {
                try SQLiteSchemaSetup.setMetadata("replicaPosition", .string(String(position)), on: connection)
            }
        }
    }

    // MARK: - Clocks

    /// The commit time of the next transaction: for a fleet member, its hybrid logical clock (later than every
    /// earlier commit here and than the origin's commit it applies); otherwise the wall clock.
    func commitTime(applying origin: SaveOrigin?) -> Date {
        guard gateway != nil else { return Date() }
        let now = Self.clock(of: Date())
        lastClock = max(now, lastClock + 1, (origin?.clock ?? 0) + 1)
        return Date(timeIntervalSince1970: Double(lastClock) / 1_000_000)
    }

    // MARK: - Applying a replicated save

    /// The writer's view for `ReplicaResolver`.
    func source(over writer: any ChangeSetSource, connection: SQLiteConnection) -> any ReplicaSource {
        Source(writer: writer, connection: connection, model: model)
    }

    /// Records what a committed save means for the fleet, in its transaction: for a replicated save its origin,
    /// the fleet-wide IDs of the objects it inserted or merged and the clocks of the keys it wrote; for a local save
    /// of a fleet member, the clocks of the keys it updated (and of unique-keyed inserts).
    func record(
        _ changes: ChangeSet?, ids: [ObjectID: ObjectID], resolved: ResolvedReplicaSave?, origin: SaveOrigin?,
        on connection: SQLiteConnection
    ) throws {
        guard let gateway else { return }
        if let origin {
            try connection.run(
                """
                INSERT INTO "\(Self.originTable)" ("Z_GATEWAY", "Z_TXN", "Z_POSITION") VALUES (?, ?, ?)
                ON CONFLICT ("Z_GATEWAY") DO UPDATE SET "Z_TXN" = MAX("Z_TXN", excluded."Z_TXN"),
                    "Z_POSITION" = MAX("Z_POSITION", excluded."Z_POSITION")
                """, [.string(origin.gateway), .int(origin.txn), .int(origin.position ?? 0)])
            hasUncommittedRows = true
        }
        for (requestID, fleetID) in resolved?.fleetIDs ?? [:] {
            let id = ids[requestID] ?? requestID
            guard let number = id.number else { continue }
            try connection.run(
                """
                INSERT OR IGNORE INTO "\(Self.idTable)" ("Z_FLEET", "Z_ENTITY", "Z_PK", "Z_ORIGINAL")
                VALUES (?, ?, ?, ?)
                """, [.string(fleetID), .string(id.entity), .int(number), .int(requestID.isTemporary ? 1 : 0)])
        }
        guard let changes else { return }
        var clocked: [ObjectID: (keys: Set<String>?, clock: ReplicaClock)] = [:]
        if let origin, let resolved {
            let clock = ReplicaClock(clock: origin.clock, gateway: origin.gateway)
            for (requestID, keys) in resolved.clockedKeys {
                let id = ids[requestID] ?? requestID
                let isInsert = requestID.isTemporary
                guard !isInsert || !(model.entity(named: id.entity)?.uniqueBy.isEmpty ?? true) else { continue }
                clocked[id] = (isInsert ? nil : keys, clock)
            }
        } else {
            let clock = ReplicaClock(clock: Self.clock(of: changes.time), gateway: gateway)
            for snapshot in changes.inserted where !(model.entity(named: snapshot.id.entity)?.uniqueBy.isEmpty ?? true)
            {
                clocked[snapshot.id] = (nil, clock)
            }
            for update in changes.updated {
                guard let entity = model.entity(named: update.snapshot.id.entity) else { continue }
                let keys = update.changedKeys.filter { entity.relationship(named: $0)?.isToMany != true }
                if !keys.isEmpty { clocked[update.snapshot.id] = (keys, clock) }
            }
        }
        for (id, write) in clocked { try setClocks(of: id, keys: write.keys, to: write.clock, on: connection) }
        for snapshot in changes.deleted {
            try connection.run(
                "DELETE FROM \"\(Self.clockTable)\" WHERE \"Z_ENTITY\" = ? AND \"Z_PK\" = ?",
                [.string(snapshot.id.entity), .int(snapshot.id.number ?? 0)])
        }
    }

    /// Sets the clock of `keys` of `id` (every key, for `nil`) to `clock`.
    private func setClocks(
        of id: ObjectID, keys: Set<String>?, to clock: ReplicaClock, on connection: SQLiteConnection
    )
        throws
    {
        let written = JSONValue.array([.int(clock.clock), .string(clock.gateway)])
        var clocks: [String: JSONValue] = [:]
        if let keys {
            clocks = try Self.storedClocks(of: id, on: connection)
            for key in keys { clocks[key] = written }
        } else {
            clocks = ["*": written]
        }
        var text: [UInt8] = []
        StoredJSON.write(.object(clocks), into: &text)
        try connection.run(
            "INSERT OR REPLACE INTO \"\(Self.clockTable)\" (\"Z_ENTITY\", \"Z_PK\", \"Z_CLOCKS\") VALUES (?, ?, ?)",
            [.string(id.entity), .int(id.number ?? 0), .string(String(decoding: text, as: UTF8.self))])
    }

    private static func storedClocks(of id: ObjectID, on connection: SQLiteConnection) throws -> [String: JSONValue] {
        let text = try connection.text(
            "SELECT \"Z_CLOCKS\" FROM \"\(clockTable)\" WHERE \"Z_ENTITY\" = ? AND \"Z_PK\" = ?",
            [.string(id.entity), .int(id.number ?? 0)])
        return text.flatMap { StoredJSON.parse($0)?.objectValue } ?? [:]
    }

    /// `ReplicaSource` over the writer's connection.
    private final class Source: ReplicaSource {
        let writer: any ChangeSetSource
        let connection: SQLiteConnection
        let model: Model

        init(writer: any ChangeSetSource, connection: SQLiteConnection, model: Model) {
            self.writer = writer
            self.connection = connection
            self.model = model
        }

        func snapshot(of id: ObjectID) throws -> ObjectSnapshot? { try writer.snapshot(of: id) }
        func members(of id: ObjectID, relationship: RelationshipDescription) throws -> [ObjectID] {
            try writer.members(of: id, relationship: relationship)
        }
        func allocateNumbers(entity: String, count: Int) throws -> Int64 {
            try writer.allocateNumbers(entity: entity, count: count)
        }
        func highestAllocatedNumber(entity: String) throws -> Int64 {
            try writer.highestAllocatedNumber(entity: entity)
        }
        func object(of entity: String, withKey key: [String: PropertyValue]) throws -> ObjectID? {
            try writer.object(of: entity, withKey: key)
        }
        func objectIDs(of entity: String, matching predicate: ObjectPredicate?) throws -> [ObjectID] {
            try writer.objectIDs(of: entity, matching: predicate)
        }

        func appliedTransaction(of gateway: String) throws -> Int64 {
            try connection.integer(
                "SELECT \"Z_TXN\" FROM \"\(SQLiteReplica.originTable)\" WHERE \"Z_GATEWAY\" = ?", [.string(gateway)])
                ?? 0
        }

        func localID(forFleetID fleetID: String) throws -> ObjectID? {
            try SQLiteReplica.localIDs(forFleetIDs: [fleetID], on: connection)[fleetID]
        }

        func clocks(of id: ObjectID) throws -> [String: ReplicaClock] {
            let stored = try SQLiteReplica.storedClocks(of: id, on: connection)
            var clocks: [String: ReplicaClock] = [:]
            for (key, value) in stored {
                guard let parts = value.arrayValue, parts.count == 2, let clock = parts[0].intValue,
                    let gateway = parts[1].stringValue
                else { continue }
                clocks[key] = ReplicaClock(clock: clock, gateway: gateway)
            }
            guard let fallback = clocks.removeValue(forKey: "*"), let entity = model.entity(named: id.entity)
            else { return clocks }
            for name in entity.propertyNames where clocks[name] == nil { clocks[name] = fallback }
            return clocks
        }
    }

    // MARK: - Reads (any connection)

    static func state(on connection: SQLiteConnection, lastTxn: Int64) throws -> ReplicaState {
        guard try tablesExist(on: connection),
            let gateway = try SQLiteSchemaSetup.metadata("replicaGateway", on: connection)
        else { return ReplicaState(gateway: nil, lastTxn: lastTxn) }
        var state = ReplicaState(
            gateway: gateway,
            published: Int64(try SQLiteSchemaSetup.metadata("replicaPublished", on: connection) ?? "0") ?? 0,
            position: Int64(try SQLiteSchemaSetup.metadata("replicaPosition", on: connection) ?? "0") ?? 0,
            lastTxn: lastTxn)
        let rows = try connection.uncachedStatement(
            "SELECT \"Z_GATEWAY\", \"Z_TXN\", \"Z_POSITION\" FROM \"\(originTable)\"")
        while try rows.step() {
            state.applied[rows.text(at: 0)] = .init(txn: rows.int64(at: 1), position: rows.int64(at: 2))
        }
        return state
    }

    static func localIDs(forFleetIDs fleetIDs: [String], on connection: SQLiteConnection) throws -> [String: ObjectID] {
        guard !fleetIDs.isEmpty, try tablesExist(on: connection) else { return [:] }
        let statement = try connection.statement(
            "SELECT \"Z_ENTITY\", \"Z_PK\" FROM \"\(idTable)\" WHERE \"Z_FLEET\" = ?")
        defer { statement.reset() }
        var result: [String: ObjectID] = [:]
        for fleetID in Set(fleetIDs) {
            statement.reset()
            try statement.bind(fleetID, at: 1)
            if try statement.step() {
                result[fleetID] = ObjectID(entity: statement.text(at: 0), number: statement.int64(at: 1))
            }
        }
        return result
    }

    static func fleetIDs(of ids: [ObjectID], on connection: SQLiteConnection) throws -> [ObjectID: String] {
        guard !ids.isEmpty, try tablesExist(on: connection) else { return [:] }
        let statement = try connection.statement(
            """
            SELECT "Z_FLEET" FROM "\(idTable)" WHERE "Z_ENTITY" = ? AND "Z_PK" = ? AND "Z_ORIGINAL" = 1
            ORDER BY rowid LIMIT 1
            """)
        defer { statement.reset() }
        var result: [ObjectID: String] = [:]
        for id in Set(ids) {
            guard let number = id.number else { continue }
            statement.reset()
            try statement.bind(id.entity, at: 1)
            try statement.bind(number, at: 2)
            if try statement.step() { result[id] = statement.text(at: 0) }
        }
        return result
    }
}
