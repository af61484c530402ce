import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Property: random saves of devices and readings (inserts, updates of one to three keys, deletes), applied to an
/// `InMemoryStore` and a `SQLiteStore` alike, leave both with the same objects after every save; fetches on each
/// indexed column, which SQLite answers from its indexes, find the same objects in both; and SQLite's
/// `integrity_check` finds every index entry matching its row. This is what a SQLite update that sets only the
/// indexed columns it changes (`SQLiteEntityTable.updateSQL(changing:)`) must keep true.
struct StoreAgreementTests {
    static let seeds: [UInt64] = [1, 2, 2026]
    static let saves = 120 * TestScale.factor

    static let addresses = (0..<8).map { "aa:bb:cc:00:00:0\($0)" }
    static let characteristics = ["2a19", "2a1a", "2a37", "2a6e", "fff1"]

    @Test(arguments: seeds)
    func randomSavesLeaveBothStoresAndSQLitesIndexesAlike(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        // Durabilities come from a generator of their own, so the saves are the same with or without them. A third
        // of the saves commit without a sync, so the writer's WAL writes go both ways (`WALWriteGathering`).
        var durabilities = SeededGenerator(seed: ~seed)
        let memory = try StoreFactory.inMemory.make(.deviceReadings)
        let sqlite = try StoreFactory.sqlite.make(.deviceReadings)
        var committed = 0
        var objects: [ObjectID: Row] = [:]  // as both stores hold them after the last save
        for step in 0..<Self.saves {
            let context = Comment(rawValue: "seed \(seed), save \(step)")
            var request = Self.randomSave(of: objects, using: &random)
            request.durability = Int.random(in: 0..<3, using: &durabilities) == 0 ? .memory : .disk
            let answers = [memory, sqlite].map { store in
                do {
                    let saved = try store.save(request)
                    return "txn \(saved.txn), ids \(saved.ids.sorted { $0.key < $1.key })"
                } catch {
                    return "\(error)"
                }
            }
            expectEqual(answers[1], answers[0], context)
            if answers[0].hasPrefix("txn ") { committed += 1 }
            // The first save after which the stores differ is the one to look at: stop there.
            objects = try Self.rows(of: memory)
            guard try expectSameObjects(objects, in: sqlite, context),
                try expectIndexedFetchesAgree(memory, sqlite, objects: objects, context)
            else { return }
        }
        // Most saves must commit, or the agreement proves little.
        expectGreaterThan(committed, Self.saves * 3 / 4)
        try expectEqual(sqlite.sqliteIntegrityCheck(), "ok")
    }

    /// One object as both stores must hold it: its version, attributes and to-one relationships (to-many members
    /// are faults in SQLite, so they are left out).
    struct Row: Equatable {
        var version: Int64
        var values: [String: PropertyValue]
    }

    private static func rows(of store: TestStore) throws -> [ObjectID: Row] {
        var rows: [ObjectID: Row] = [:]
        for (id, snapshot) in try store.everything() {
            let entity = try #require(store.model.entity(named: id.entity))
            let keys = entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
            rows[id] = Row(
                version: snapshot.version,
                values: Dictionary(uniqueKeysWithValues: keys.map { ($0, snapshot.values[$0] ?? .null) }))
        }
        return rows
    }

    /// Whether `sqlite` holds the `expected` objects (the in-memory store's); records the ones that differ, as each
    /// store has them.
    private func expectSameObjects(
        _ expected: [ObjectID: Row], in sqlite: TestStore, _ context: Comment
    ) throws -> Bool {
        let actual = try Self.rows(of: sqlite)
        let differing = Set(expected.keys).union(actual.keys).filter { expected[$0] != actual[$0] }.sorted()
        for id in differing {
            expectEqual(actual[id], expected[id], "\(context): \(id), SQLite against in memory")
        }
        return differing.isEmpty
    }

    /// Whether fetches by each value of each indexed column find the same objects in both stores; records the
    /// ones that do not.
    private func expectIndexedFetchesAgree(
        _ memory: TestStore, _ sqlite: TestStore, objects: [ObjectID: Row], _ context: Comment
    ) throws -> Bool {
        var probes: [(entity: String, format: String, arguments: [String: PropertyValue])] = []
        probes += Self.addresses.map { ("Device", "address == $v", ["v": .string($0)]) }
        probes += Self.characteristics.map { ("Reading", "characteristic == $v", ["v": .string($0)]) }
        probes += objects.keys.filter { $0.entity == "Device" }.map {
            ("Reading", "device == $v", ["v": .reference($0)])
        }
        probes.append(("Reading", "device == nil", [:]))
        var agree = true
        for probe in probes {
            let request = FetchRequest(
                entity: probe.entity, predicate: try ObjectPredicate(format: probe.format), arguments: probe.arguments,
                resultType: .ids)
            let found = try [memory, sqlite].map { store -> [ObjectID] in
                guard case .ids(let ids) = try store.fetch(request).content else { return [] }
                return ids.sorted()
            }
            expectEqual(found[1], found[0], "\(context): \(probe.format) with \(probe.arguments)")
            agree = agree && found[1] == found[0]
        }
        return agree
    }

    /// One save: an insert, an update of one to three keys, or a delete, of a device or a reading.
    private static func randomSave(
        of rows: [ObjectID: Row], using random: inout SeededGenerator
    ) -> SaveRequest {
        let devices = rows.keys.filter { $0.entity == "Device" }.sorted()
        let readings = rows.keys.filter { $0.entity == "Reading" }.sorted()
        func deviceValue() -> PropertyValue {
            guard let device = devices.randomElement(using: &random), Int.random(in: 0..<5, using: &random) > 0 else {
                return .null
            }
            return .reference(device)
        }
        func value(of key: String) -> PropertyValue {
            switch key {
            case "address": return .string(addresses.randomElement(using: &random)!)
            case "name":
                return Bool.random(using: &random) ? .string("n\(Int.random(in: 0..<4, using: &random))") : .null
            case "connected": return .bool(Bool.random(using: &random))
            case "lastSeen", "time":
                return .date(Date(timeIntervalSince1970: Double(Int.random(in: 0..<1_000_000, using: &random))))
            case "characteristic": return .string(characteristics.randomElement(using: &random)!)
            case "value": return .binary(Data([UInt8.random(in: 0...255, using: &random)]))
            case "chain": return Bool.random(using: &random) ? .string("chain") : .null
            default: return deviceValue()  // "device"
            }
        }
        let deviceKeys = ["address", "name", "connected", "lastSeen"]
        let readingKeys = ["characteristic", "value", "time", "chain", "device"]
        func insertDevice() -> SaveRequest {
            SaveRequest(inserts: [.init(id: tmp("Device", "d"), values: ["address": value(of: "address")])])
        }
        // 0: a device; 1: a device while there are fewer than 6, else a reading; 2–3: a reading; 4–8: an update;
        // 9, or an update with nothing to update: a delete (a device when there is nothing to delete).
        let choice = Int.random(in: 0..<10, using: &random)
        if choice == 0 || (choice == 1 && devices.count < 6) { return insertDevice() }
        if choice < 4 {
            var values: [String: PropertyValue] = [:]
            for key in readingKeys { values[key] = value(of: key) }
            return SaveRequest(inserts: [.init(id: tmp("Reading", "r"), values: values)])
        }
        if choice < 9, !devices.isEmpty || !readings.isEmpty {
            let isDevice = readings.isEmpty || (!devices.isEmpty && Bool.random(using: &random))
            let id = isDevice ? devices.randomElement(using: &random)! : readings.randomElement(using: &random)!
            let keys = (isDevice ? deviceKeys : readingKeys).shuffled(using: &random).prefix(
                Int.random(in: 1...3, using: &random))
            var values: [String: PropertyValue] = [:]
            for key in keys { values[key] = value(of: key) }
            return SaveRequest(updates: [.init(id: id, version: nil, values: values)])
        }
        guard let id = (Bool.random(using: &random) ? readings : devices).randomElement(using: &random) else {
            return insertDevice()
        }
        return SaveRequest(deletes: [.init(id: id, version: nil)])
    }
}
