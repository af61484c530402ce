import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// A SQLite store as a fleet member (docs/fleet.md): saves from other gateways applied once, resolved by clock,
/// objects named by fleet-wide IDs, history kept until published.
struct SQLiteReplicaTests {
    /// Stations whose samples (and their marks) go with them, and whose notes forget them.
    static let deleteRuleModel: Model = try! Model(entities: [
        EntityDescription(
            name: "Station", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription(
                    "samples", destination: "Sample", toMany: true, inverse: "station", deleteRule: .cascade),
                RelationshipDescription("notes", destination: "Note", toMany: true, inverse: "station"),
            ]),
        EntityDescription(
            name: "Sample", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription("station", destination: "Station", inverse: "samples"),
                RelationshipDescription(
                    "marks", destination: "Mark", toMany: true, inverse: "sample", deleteRule: .cascade),
            ]),
        EntityDescription(
            name: "Mark", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("sample", destination: "Sample", inverse: "marks")]),
        EntityDescription(
            name: "Note", attributes: [AttributeDescription("name", .string)],
            relationships: [RelationshipDescription("station", destination: "Station", inverse: "notes")]),
    ])

    private func makeStore(retention: Int = 50, model: Model = StoreUniqueKeyTests.model) throws -> (SQLiteStore, URL) {
        let directory = try TestStore.makeDirectory()
        let store = try SQLiteStore(
            url: directory.appendingPathComponent("store.sqlite"), model: model,
            configuration: .init(historyRetention: retention))
        _ = try store.replicaState(registering: "a")
        return (store, directory)
    }

    private func origin(
        _ txn: Int64, clock: Int64, from gateway: String = "b", ids: [ObjectID: String] = [:]
    )
        -> SaveOrigin
    {
        SaveOrigin(gateway: gateway, txn: txn, clock: clock, position: txn, fleetIDs: ids)
    }

    private func replicated(_ request: SaveRequest, _ origin: SaveOrigin) -> SaveRequest {
        var request = request
        request.origin = origin
        request.author = "fleet:\(origin.gateway)"
        return request
    }

    @Test func aTransactionAppliedTwiceChangesNothingTheSecondTime() throws {
        let (store, directory) = try makeStore()
        defer {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }
        let insert = replicated(
            SaveRequest(inserts: [.init(id: tmp("Probe", "p"), values: ["name": .string("one")])]),
            origin(1, clock: 1_000, ids: [tmp("Probe", "p"): "b:Probe/9"]))
        let first = try store.save(insert)
        let second = try store.save(insert)
        expectEqual(first.txn, 1)
        expectEqual(second.txn, 1)
        expectEqual(try store.all("Probe").count, 1)
        let state = try store.replicaState(registering: nil)
        expectEqual(state.applied["b"]?.txn, 1)
        expectEqual(try store.localIDs(forFleetIDs: ["b:Probe/9"]), ["b:Probe/9": oid("Probe", 1)])
        expectEqual(try store.fleetIDs(of: [oid("Probe", 1)]), [oid("Probe", 1): "b:Probe/9"])
    }

    @Test func theLaterCommitWinsEachKeyAndADeleteWinsOverAnUpdate() throws {
        let (store, directory) = try makeStore()
        defer {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }
        // A key's clock is its last update's (an insert has no concurrent write: others see it first).
        let probe = try store.insert("Probe", ["name": .string("first")])
        try store.commit(SaveRequest(updates: [.init(id: probe, version: nil, values: ["name": .string("local")])]))
        let localClock = try store.replicaHistory(since: 1, limit: 1)[0].clock
        // An older write of `name` loses; a newer one wins.
        try store.commit(
            replicated(
                SaveRequest(updates: [.init(id: probe, version: nil, values: ["name": .string("older")])]),
                origin(1, clock: localClock - 10)))
        expectEqual(try store.snapshot(probe)?.values["name"], .string("local"))
        try store.commit(
            replicated(
                SaveRequest(updates: [.init(id: probe, version: nil, values: ["name": .string("newer")])]),
                origin(2, clock: localClock + 10)))
        expectEqual(try store.snapshot(probe)?.values["name"], .string("newer"))
        // A delete, then an update of the deleted object: the update is dropped, the transaction still applied.
        try store.commit(
            replicated(SaveRequest(deletes: [.init(id: probe, version: nil)]), origin(1, clock: 5, from: "c")))
        try store.commit(
            replicated(
                SaveRequest(updates: [.init(id: probe, version: nil, values: ["name": .string("late")])]),
                origin(3, clock: localClock + 20)))
        expectNil(try store.snapshot(probe))
        expectEqual(try store.replicaState(registering: nil).applied["b"]?.txn, 3)
    }

    @Test func anInsertWhoseUniqueKeyIsTakenMergesIntoThatObjectByClock() throws {
        let (store, directory) = try makeStore()
        defer {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }
        let sensor = try store.insert("Sensor", ["serial": .string("S1"), "label": .string("mine")])
        let localClock = try store.replicaHistory(since: 0, limit: 1)[0].clock
        try store.commit(
            replicated(
                SaveRequest(inserts: [
                    .init(id: tmp("Sensor", "s"), values: ["serial": .string("S1"), "label": .string("theirs")])
                ]), origin(1, clock: localClock - 1, ids: [tmp("Sensor", "s"): "b:Sensor/4"])))
        expectEqual(try store.all("Sensor").count, 1)
        expectEqual(try store.snapshot(sensor)?.values["label"], .string("mine"))
        expectEqual(try store.localIDs(forFleetIDs: ["b:Sensor/4"]), ["b:Sensor/4": sensor])
        // Not an object b inserted here: the local object keeps its own fleet-wide ID.
        expectEqual(try store.fleetIDs(of: [sensor]), [:])
    }

    /// A gateway that deleted a station gets another's transaction written before that delete reached it: a new
    /// sample of the station (and a mark of that sample), a sample moved to it, a note of it. Each ends as the
    /// delete's rules made it where the transaction came first: the samples and the mark go (cascade), the note
    /// forgets the station (nullify); the rest of the transaction applies.
    @Test func aValueNamingAnObjectDeletedHereFollowsTheDeleteRuleThatRemovedIt() throws {
        let (store, directory) = try makeStore(model: Self.deleteRuleModel)
        defer {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }
        let gone = try store.insert("Station", ["name": .string("gone")])
        let kept = try store.insert("Station", ["name": .string("kept")])
        let moved = try store.insert("Sample", ["name": .string("moved"), "station": .reference(kept)])
        try store.commit(SaveRequest(deletes: [.init(id: gone, version: nil)]))
        let clock = try store.replicaHistory(since: 0, limit: 10).last!.clock + 10
        let sample = tmp("Sample", "s")
        try store.commit(
            replicated(
                SaveRequest(
                    inserts: [
                        .init(id: tmp("Mark", "m"), values: ["name": .string("mark"), "sample": .reference(sample)]),
                        .init(id: sample, values: ["name": .string("new"), "station": .reference(gone)]),
                        .init(id: tmp("Note", "n"), values: ["name": .string("note"), "station": .reference(gone)]),
                        .init(id: tmp("Sample", "t"), values: ["name": .string("other"), "station": .reference(kept)]),
                    ],
                    updates: [.init(id: moved, version: nil, values: ["station": .reference(gone)])]),
                origin(1, clock: clock)))
        expectEqual(try store.all("Sample").compactMap { $0.values["name"] }, [.string("other")])
        expectEqual(try store.all("Mark").count, 0)
        let notes = try store.all("Note")
        expectEqual(notes.map { $0.values["name"] }, [.string("note")])
        expectEqual(notes.first?.values["station"], .null)
        expectEqual(try store.replicaState(registering: nil).applied["b"]?.txn, 1)
    }

    @Test func historyIsKeptUntilPublished() throws {
        let (store, directory) = try makeStore(retention: 4)
        defer {
            store.close()
            try? FileManager.default.removeItem(at: directory)
        }
        for i in 0..<20 { try store.insert("Probe", ["name": .string("p\(i)")]) }
        expectEqual(try store.history(since: 0, limit: 100).count, 20)
        _ = try store.recordReplicaProgress(published: 18, position: nil)
        for i in 0..<5 { try store.insert("Probe", ["name": .string("q\(i)")]) }
        let kept = try store.history(since: 18, limit: 100)
        expectEqual(kept.first?.txn, 19)
        // Pruning resumed up to the published position: the oldest transactions are gone, none after 18 is.
        let error = storeError { _ = try store.history(since: 0, limit: 1) }
        guard case .historyUnavailable(_, let oldest)? = error else {
            Issue.record("history from 0 should be pruned, got \(String(describing: error))")
            return
        }
        expectTrue(oldest > 1 && oldest <= 19, "oldest \(oldest)")
    }
}
