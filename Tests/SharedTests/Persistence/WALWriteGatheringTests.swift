import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// The writer's WAL writes (`WALWriteGathering`): a durable group's frames reach the file with one write, a
/// memory group's as SQLite makes them, other connections read every committed frame, and a write that fails
/// fails its group and leaves the store as it was.
struct WALWriteGatheringTests {
    let store: TestStore
    var sqlite: SQLiteStore { store.store as! SQLiteStore }

    init() throws {
        store = try StoreFactory.sqlite.make(.deviceReadings)
    }

    private func devices(_ addresses: [String], _ durability: Durability = .disk) -> SaveRequest {
        var request = SaveRequest(
            inserts: addresses.map { .init(id: tmp("Device", $0), values: ["address": .string($0)]) })
        request.durability = durability
        return request
    }

    @Test func aDurableGroupReachesTheWALWithOneWriteWhateverItsFrames() throws {
        try store.commit(devices(["a"]))
        expectEqual(sqlite.statistics.walFrames, 3)
        expectEqual(sqlite.statistics.walWrites, 1)
        // 300 devices fill several pages of the table and of the index: more frames, still one write.
        try store.commit(devices((0..<300).map { "device \($0)" }))
        expectGreaterThan(sqlite.statistics.walFrames, 3 + 8)
        expectEqual(sqlite.statistics.walWrites, 2)
        expectEqual(try store.deviceAddresses().count, 301)
        try expectEqual(store.sqliteIntegrityCheck(), "ok")
    }

    @Test func aCommitLargerThanOneWriteReachesTheWALIn64KiBPieces() throws {
        // The default VFS writes a length modulo 128 KiB: a run of exactly 128 KiB, written whole, would be
        // written as nothing (SQLite reports a full disk), so runs go in pieces of 64 KiB.
        try store.commit(devices((0..<3000).map { "device \($0)" }))
        let frames = sqlite.statistics.walFrames
        expectGreaterThan(frames * 4120, 2 * 128 * 1024)
        expectEqual(sqlite.statistics.walWrites, (frames * 4120 + 65535) / 65536)
        expectEqual(try store.deviceAddresses().count, 3000)
        try expectEqual(store.sqliteIntegrityCheck(), "ok")
    }

    @Test func aMemoryGroupWritesItsFramesAsSQLiteMakesThemAndOtherConnectionsReadThem() throws {
        // The first memory group syncs: it reserves the txns and IDs the next ones hand out without a sync
        // (`NumberReservations`).
        try store.commit(devices(["first"], .memory))
        let (frames, writes) = (sqlite.statistics.walFrames, sqlite.statistics.walWrites)
        try store.commit(devices(["a"], .memory))
        // No sync follows a memory commit, so nothing may wait in memory: two writes per frame (header, page).
        expectEqual(sqlite.statistics.walFrames - frames, 3)
        expectEqual(sqlite.statistics.walWrites - writes, 6)
        // Reads go through the store's other connections.
        expectEqual(try store.deviceAddresses(), ["first", "a"])
        try store.commit(devices(["b"]))
        expectEqual(sqlite.statistics.walWrites - writes, 7)
        try store.commit(devices(["c"], .memory))
        expectEqual(try store.deviceAddresses(), ["first", "a", "b", "c"])
        try expectEqual(store.sqliteIntegrityCheck(), "ok")
    }

    @Test func aWALWriteThatFailsFailsItsSaveAndTheStoreCarriesOn() throws {
        try store.commit(devices(["a"]))
        sqlite.failNextWALWrite()
        let failure = #expect(throws: SQLiteError.self) { try store.commit(devices(["b", "c"])) }
        expectEqual(failure?.code, 778, "SQLITE_IOERR_WRITE")  // SQLITE_IOERR | (3 << 8)
        expectEqual(try store.deviceAddresses(), ["a"])
        expectEqual(sqlite.lastTransaction, 1)
        try store.commit(devices(["d"]))
        expectEqual(try store.deviceAddresses(), ["a", "d"])
        expectEqual(sqlite.lastTransaction, 2)
        // And the file holds exactly that, for a store opened on it afresh.
        let url = try #require(store.directory).appendingPathComponent("store.sqlite")
        sqlite.close()
        let reopened = TestStore(store: try SQLiteStore(url: url, model: store.model), directory: nil)
        defer { (reopened.store as? SQLiteStore)?.close() }
        expectEqual(try reopened.all("Device").map { $0.values["address"] }, [.string("a"), .string("d")])
        expectEqual(reopened.lastTransaction, 2)
        try expectEqual(reopened.sqliteIntegrityCheck(), "ok")
    }

    @Test func readersSeeEveryDurableCommitAsSoonAsItsSaveIsAnswered() throws {
        // Each answer comes after COMMIT, which wrote the gathered frames; a read that follows must find them.
        for index in 0..<200 {
            let address = "device \(index)"
            try store.commit(devices([address], index.isMultiple(of: 3) ? .memory : .disk))
            let found = try store.fetch(
                FetchRequest(entity: "Device", predicate: try ObjectPredicate(format: "address == '\(address)'")))
            guard case .objects(let objects) = found.content, objects.count == 1 else {
                Issue.record("save \(index) is not visible to a reader: \(found.content)")
                return
            }
        }
        try expectEqual(store.sqliteIntegrityCheck(), "ok")
    }
}
