import CContextBusSQLite
import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The SQLite writer's group commit: saves written without savepoints, a retry in savepoints
/// when a save's rows cannot be written, late joiners, and the answers each save gets.
struct SQLiteWriterTests {
    let store: TestStore
    var sqlite: SQLiteStore { store.store as! SQLiteStore }

    init() throws {
        store = try StoreFactory.sqlite.make(.deviceReadings)
    }

    private func insert(_ address: String, durability: Durability = .disk) -> SaveRequest {
        Self.device(address, durability)
    }

    /// Queues `requests` in order without blocking; returns a function that waits for every
    /// answer and returns them in queue order (`txn N` or the error's description).
    private func queue(_ requests: [SaveRequest]) -> @Sendable () -> [String] {
        Self.queue(on: sqlite, requests)
    }

    private static func describe(_ result: Result<SaveResult, any Error>) -> String {
        switch result {
        case .success(let saved): return "txn \(saved.txn)"
        case .failure(let error): return "\(error)"
        }
    }

    /// Makes SQLite refuse to insert a device whose address is `refused` (an error while the
    /// save's rows are written, after it was planned).
    private func refuseAddress(_ address: String) throws {
        let path = try #require(store.directory).appendingPathComponent("store.sqlite").path
        var db: OpaquePointer?
        expectEqual(sqlite3_open(path, &db), SQLITE_OK)
        defer { sqlite3_close(db) }
        let trigger = """
            CREATE TRIGGER refuse BEFORE INSERT ON Device WHEN NEW.address = '\(address)'
            BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
            """
        expectEqual(sqlite3_exec(db, trigger, nil, nil, nil), SQLITE_OK)
    }

    @Test func aSaveWhoseRowsCannotBeWrittenFailsAloneAndTheRestOfItsGroupCommits() throws {
        try refuseAddress("refused")
        let resume = sqlite.suspendWriter()
        let answers = queue([insert("a"), insert("refused"), insert("b"), insert("c")])
        resume()
        let answered = answers()
        expectEqual(answered[0], "txn 1")
        expectTrue(answered[1].contains("refused by the test"))
        expectEqual(answered[2...], ["txn 2", "txn 3"])
        expectEqual(sqlite.statistics.groups, 1)
        expectEqual(sqlite.statistics.groupSizes, [4: 1])
        expectEqual(sqlite.statistics.groupsRetriedInSavepoints, 1)
        try expectEqual(store.deviceAddresses(), ["a", "b", "c"])
        let history = try store.history(since: 0, limit: 10)
        expectEqual(history.map(\.txn), [1, 2, 3])
        expectEqual(history.map { $0.inserted.first?.values["address"] }, [.string("a"), .string("b"), .string("c")])
        // The numbers the rolled-back first attempt allocated are not handed out again.
        let numbers = try store.all("Device").compactMap(\.id.number)
        expectTrue(numbers == numbers.sorted() && Set(numbers).count == 3)
        expectGreaterThan(try store.insert("Device", ["address": .string("d")]).number!, numbers.max()!)
    }

    @Test func aSaveThatFailsWhilePlannedFailsAloneWithoutARetry() throws {
        let resume = sqlite.suspendWriter()
        let missing = SaveRequest(updates: [
            .init(id: ObjectID(entity: "Device", number: 99), version: nil, values: ["name": .string("x")])
        ])
        let answers = queue([insert("a"), missing, insert("b")])
        resume()
        expectEqual(
            answers(),
            [
                "txn 1", StoreError.notFound(ObjectID(entity: "Device", number: 99)).description, "txn 2",
            ])
        expectEqual(sqlite.statistics.groups, 1)
        expectEqual(sqlite.statistics.groupsRetriedInSavepoints, 0)
        try expectEqual(store.deviceAddresses(), ["a", "b"])
    }

    @Test func aGroupWhoseEverySaveFailsCommitsNothing() throws {
        try refuseAddress("refused")
        let resume = sqlite.suspendWriter()
        let missing = SaveRequest(updates: [
            .init(id: ObjectID(entity: "Device", number: 99), version: nil, values: ["name": .string("x")])
        ])
        let answers = queue([missing, insert("refused")])
        resume()
        let answered = answers()
        expectEqual(answered[0], StoreError.notFound(ObjectID(entity: "Device", number: 99)).description)
        expectTrue(answered[1].contains("refused by the test"))
        expectEqual(sqlite.lastTransaction, 0)
        expectTrue(try store.history(since: 0, limit: 10).isEmpty)
        _ = try store.insert("Device", ["address": .string("after")])
        expectEqual(sqlite.lastTransaction, 1)
    }

    @Test func savesQueuedWhileAGroupIsAppliedJoinItsTransaction() throws {
        let late = Locked<(@Sendable () -> [String])?>(nil)
        let sqlite = sqlite
        sqlite.whenGroupApplied {
            sqlite.whenGroupApplied(nil)
            late.withLock { $0 = Self.queue(on: sqlite, [Self.device("late", .disk)]) }
        }
        let first = try store.commit(insert("first"))
        let lateAnswers = try #require(late.withLock { $0 })
        expectEqual(first.txn, 1)
        expectEqual(lateAnswers(), ["txn 2"])
        expectEqual(sqlite.statistics.groups, 1)
        expectEqual(sqlite.statistics.groupSizes, [2: 1])
        try expectEqual(store.deviceAddresses(), ["first", "late"])
    }

    @Test func aDiskSaveDoesNotJoinAGroupCommittingWithoutFsyncNorDoTheSavesBehindIt() throws {
        let late = Locked<(@Sendable () -> [String])?>(nil)
        let sqlite = sqlite
        // The first memory group syncs (it reserves the txns the next ones hand out without a sync,
        // `NumberReservations`); the one after it does not.
        try store.commit(insert("warm-up", durability: .memory))
        sqlite.whenGroupApplied {
            sqlite.whenGroupApplied(nil)
            late.withLock { $0 = Self.queue(on: sqlite, [Self.device("disk", .disk), Self.device("memory", .memory)]) }
        }
        let first = try store.commit(insert("first", durability: .memory))
        let lateAnswers = try #require(late.withLock { $0 })
        expectEqual(first.txn, 2)
        expectEqual(lateAnswers(), ["txn 3", "txn 4"])
        expectEqual(sqlite.statistics.groupSizes, [1: 2, 2: 1])
        try expectEqual(store.deviceAddresses(), ["warm-up", "first", "disk", "memory"])
    }

    @Test func eachWaiterOfAGroupLearnsItsOwnTxnIDsAndVersions() throws {
        let resume = sqlite.suspendWriter()
        let results = Locked<[Int: SaveResult]>([:])
        let done = DispatchGroup()
        for i in 0..<5 {
            done.enter()
            let sqlite = sqlite
            DispatchQueue(label: "waiter \(i)").async {
                defer { done.leave() }
                guard let result = try? sqlite.save(Self.device("w\(i)", .disk)) else { return }
                results.withLock { $0[i] = result }
            }
        }
        while sqlite.pendingSaveCount < 5 { usleep(1_000) }  // every save waits behind the held writer
        resume()
        done.wait()
        let answered = results.withLock { $0 }
        expectEqual(answered.count, 5)
        expectEqual(Set(answered.values.map(\.txn)), Set(1...5))
        for (i, result) in answered {
            let id = try #require(result.ids[tmp("Device", "w\(i)")])
            expectEqual(result.versions, [id: 1])
            expectEqual(result.changes!.txn, result.txn)
            expectEqual(result.changes!.inserted.map(\.id), [id])
            try expectEqual(store.snapshot(id)?.values["address"], .string("w\(i)"))
        }
        expectEqual(sqlite.statistics.groupSizes, [5: 1])
    }

    @Test func aCommitWritesOneWALFrameForEachPageItChangesAndNoMore() throws {
        // A new store: every table and index is one page. An insert changes Device's row, its `address` index and
        // the history (not Z_METADATA, and not Device's counter: the IDs and txns it hands out are within what the
        // store reserved when it opened, `NumberReservations`).
        let inserted = try store.insert("Device", ["address": .string("a")])
        expectEqual(sqlite.statistics.walFrames, 3)
        // An update of an attribute without an index: the row and the history; not the index of `address`, which
        // it leaves alone.
        _ = try store.save(SaveRequest(updates: [.init(id: inserted, version: nil, values: ["name": .string("x")])]))
        expectEqual(sqlite.statistics.walFrames, 3 + 2)
        // An update of `address`: its index too.
        _ = try store.save(SaveRequest(updates: [.init(id: inserted, version: nil, values: ["address": .string("z")])]))
        expectEqual(sqlite.statistics.walFrames, 3 + 2 + 3)
        // Three inserts in one group share the three pages of one.
        let resume = sqlite.suspendWriter()
        let answers = queue([insert("b"), insert("c"), insert("d")])
        resume()
        expectEqual(answers(), ["txn 4", "txn 5", "txn 6"])
        expectEqual(sqlite.statistics.groups, 4)
        expectEqual(sqlite.statistics.walFrames, 3 + 2 + 3 + 3)
        try expectEqual(store.snapshot(inserted)?.values["address"], .string("z"))
        try expectEqual(store.snapshot(inserted)?.values["name"], .string("x"))
        // A reading of an existing device (what devicesvc records): the reading's row, its `characteristic` and
        // `device` indexes, the history, and the device's row (its version: its `readings` changed).
        _ = try store.insert(
            "Reading",
            [
                "characteristic": .string("2a19"), "value": .binary(Data([1])),
                "time": .date(Date(timeIntervalSince1970: 0)), "device": .reference(inserted),
            ])
        expectEqual(sqlite.statistics.walFrames, 3 + 2 + 3 + 3 + 5)
        // Its delete: the reading's row and two index entries, the history, the device's row (its version).
        let readings = try store.all("Reading").map(\.id)
        _ = try store.save(SaveRequest(deletes: readings.map { .init(id: $0, version: nil) }))
        expectEqual(sqlite.statistics.walFrames, 3 + 2 + 3 + 3 + 5 + 5)
        try expectEqual(store.sqliteIntegrityCheck(), "ok")
    }

    @Test func anUpdateSetsTheIndexedColumnsItChangesAndKeepsTheOthersIndexed() throws {
        let device = try store.insert("Device", ["address": .string("a")])
        let reading = try store.insert(
            "Reading",
            [
                "characteristic": .string("2a19"), "value": .binary(Data([1])),
                "time": .date(Date(timeIntervalSince1970: 0)),
                "device": .reference(device),
            ])
        let other = try store.insert("Device", ["address": .string("b")])
        let time = PropertyValue.date(Date(timeIntervalSince1970: 60))
        // The foreign key alone, an unindexed attribute alone, then the indexed attribute and the key together;
        // each is read back from the file.
        var expected = try #require(try store.snapshot(reading)).values
        for values: [String: PropertyValue] in [
            ["device": .reference(other)], ["time": time],
            ["characteristic": .string("2a1a"), "device": .reference(device)],
        ] {
            _ = try store.save(SaveRequest(updates: [.init(id: reading, version: nil, values: values)]))
            expected.merge(values) { _, new in new }
            try expectEqual(store.snapshot(reading)?.values, expected)
        }
        try expectEqual(store.snapshot(reading)?.version, 4)
        let found = try store.fetch(
            FetchRequest(
                entity: "Reading", predicate: ObjectPredicate(format: "characteristic == '2a1a'"), resultType: .ids))
        expectEqual(found.content, .ids([reading]))
        try expectEqual(store.sqliteIntegrityCheck(), "ok")
    }

    private static func device(_ address: String, _ durability: Durability) -> SaveRequest {
        var request = SaveRequest(inserts: [.init(id: tmp("Device", address), values: ["address": .string(address)])])
        request.durability = durability
        return request
    }

    /// `queue(_:)` for a hook on the writer's queue, where `self` is not at hand.
    private static func queue(on sqlite: SQLiteStore, _ requests: [SaveRequest]) -> @Sendable () -> [String] {
        let answers = Locked<[Int: String]>([:])
        let done = DispatchGroup()
        for (i, request) in requests.enumerated() {
            done.enter()
            sqlite.save(request) { result in
                answers.withLock { $0[i] = describe(result) }
                done.leave()
            }
        }
        let count = requests.count
        return {
            done.wait()
            return answers.withLock { answers in (0..<count).map { answers[$0] ?? "no answer" } }
        }
    }
}
