import Foundation
import TestSupport
import Testing

@testable import ContextBusSQLite

/// The simulated disk of the power-cut tests (`PowerCutDisk`, `PowerCutVFS`, `PowerCut`): a cut loses exactly what
/// no sync made durable, in whole or in part, and leaves what a sync made durable; directory changes last only once
/// their directory is synced. storesvc's power-cut rounds (`StoreServicePowerCutTests`) rely on this.
struct PowerCutTests {
    let directory: URL
    var diskDirectory: String { directory.appendingPathComponent("disk").path }

    init() throws {
        directory = try TestStore.makeDirectory()
    }

    private func makeDisk() throws -> PowerCutDisk {
        try PowerCutDisk(directory: diskDirectory, databasePath: directory.appendingPathComponent("db.sqlite").path)
    }

    // MARK: - Journal

    @Test func journalRecordsReadBackAndATornLastRecordIsLeftOut() {
        let records: [PowerCutJournal.Record] = [
            .base(size: 4096), .preimage(offset: 0, bytes: [1, 2, 3]), .write(offset: 0, bytes: [9, 9, 9, 9]),
            .truncate(size: 100),
        ]
        let bytes = PowerCutJournal.magic + PowerCutJournal.encode(records)
        expectEqual(PowerCutJournal.records(in: bytes), records)
        let lengths = records.map { PowerCutJournal.encode([$0]).count }
        for cut in 0..<bytes.count {
            // A process killed while appending leaves the records wholly written before the cut.
            var whole = 0
            var end = PowerCutJournal.magic.count
            while whole < records.count, end + lengths[whole] <= cut {
                end += lengths[whole]
                whole += 1
            }
            expectEqual(PowerCutJournal.records(in: Array(bytes.prefix(cut))), Array(records.prefix(whole)))
        }
    }

    @Test func freezePointsReadBackAndBadOnesAreRefused() {
        expectEqual(PowerCutFreezePoint(parsing: "after:wal-sync:12"), PowerCutFreezePoint(.after, .walSync, count: 12))
        expectEqual(PowerCutFreezePoint(parsing: "before:rename:1")?.description, "before:rename:1")
        for bad in ["after:wal-sync", "during:wal-sync:1", "after:wal:1", "after:wal-sync:0", "after:wal-sync:x"] {
            expectNil(PowerCutFreezePoint(parsing: bad), "\(bad)")
        }
    }

    // MARK: - File content

    /// Writes through the disk as the VFS does: journal first, then the file.
    private func write(_ bytes: [UInt8], at offset: Int64, to path: String, on disk: PowerCutDisk) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try disk.change(
            .write(offset: offset, bytes: bytes), of: path,
            readDurable: { offset, count in
                try? handle.seek(toOffset: UInt64(offset))
                let data = (try? handle.read(upToCount: count)) ?? Data()
                return Array(data) + [UInt8](repeating: 0, count: count - data.count)
            },
            size: { Int64((try? handle.seekToEnd()) ?? 0) },
            perform: {
                try? handle.seek(toOffset: UInt64(offset))
                try? handle.write(contentsOf: Data(bytes))
            })
    }

    @Test(arguments: [PowerCut.Loss.everything, .nothing])
    func aCutLosesTheWritesSinceTheLastSyncAndKeepsTheOnesBefore(loss: PowerCut.Loss) throws {
        let path = directory.appendingPathComponent("file").path
        try Data(repeating: 0x11, count: 4096).write(to: URL(fileURLWithPath: path))
        let disk = try makeDisk()
        try write([UInt8](repeating: 0x22, count: 100), at: 0, to: path, on: disk)
        try disk.sync(path, directoryToo: false)
        try write([UInt8](repeating: 0x33, count: 100), at: 50, to: path, on: disk)
        try write([UInt8](repeating: 0x44, count: 10), at: 5000, to: path, on: disk)  // past the end
        var random = SeededRandom(seed: 1)
        let outcome = try PowerCut.apply(to: diskDirectory, losing: loss, using: &random)
        var expected = [UInt8](repeating: 0x22, count: 100) + [UInt8](repeating: 0x11, count: 3996)
        if loss == .nothing {
            expected.replaceSubrange(50..<150, with: [UInt8](repeating: 0x33, count: 100))
            expected += [UInt8](repeating: 0, count: 904) + [UInt8](repeating: 0x44, count: 10)
            expectEqual(outcome.writesKept, 2)
        } else {
            expectEqual(outcome.writesLost, 2)
        }
        expectEqual(try Array(Data(contentsOf: URL(fileURLWithPath: path))), expected)
    }

    @Test(arguments: 1...20)
    func aWriteTornAtSectorBoundariesKeepsEachSectorWholeOrAsItWas(seed: UInt64) throws {
        let path = directory.appendingPathComponent("file").path
        try Data(repeating: 0x11, count: 8192).write(to: URL(fileURLWithPath: path))
        let disk = try makeDisk()
        try write([UInt8](repeating: 0xAA, count: 3000), at: 700, to: path, on: disk)
        var random = SeededRandom(seed: seed)
        let outcome = try PowerCut.apply(to: diskDirectory, losing: .anySubset, using: &random)
        let content = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        expectEqual(content.count, 8192)
        expectEqual(content[..<700].allSatisfy { $0 == 0x11 }, true)
        expectEqual(content[3700...].allSatisfy { $0 == 0x11 }, true)
        // Each sector of the write (cut at the file's 512-byte boundaries) holds the write or the old bytes.
        var start = 700
        while start < 3700 {
            let end = min(3700, (start / 512 + 1) * 512)
            let sector = Set(content[start..<end])
            expectTrue(sector == [0xAA] || sector == [0x11], "seed \(seed), bytes \(start)..<\(end): \(sector)")
            start = end
        }
        expectEqual(outcome.writesKept + outcome.writesLost + outcome.writesTorn, 1)
    }

    @Test func aCutUndoesATruncationNotSyncedAndTheWritesAfterIt() throws {
        let path = directory.appendingPathComponent("file").path
        try Data(repeating: 0x11, count: 4096).write(to: URL(fileURLWithPath: path))
        let disk = try makeDisk()
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try disk.change(
            .truncate(size: 1000), of: path,
            readDurable: { offset, count in
                try? handle.seek(toOffset: UInt64(offset))
                return Array((try? handle.read(upToCount: count)) ?? Data())
            },
            size: { Int64((try? handle.seekToEnd()) ?? 0) }, perform: { try? handle.truncate(atOffset: 1000) })
        try write([UInt8](repeating: 0x22, count: 2000), at: 1000, to: path, on: disk)
        var random = SeededRandom(seed: 1)
        try PowerCut.apply(to: diskDirectory, losing: .everything, using: &random)
        expectEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data(repeating: 0x11, count: 4096))
    }

    // MARK: - SQLite through the VFS

    /// A WAL database written through the disk's VFS: one durable commit, then two that no sync made durable.
    /// Every cut of a copy of it leaves the first commit and a prefix of the others, and a file that passes
    /// `integrity_check`.
    @Test func aWALDatabaseKeepsItsSyncedCommitsAndAPrefixOfTheOthersWhateverTheCut() throws {
        let disk = try makeDisk()
        let vfs = PowerCutVFS.register(disk, name: "power-cut-test-\(UUID().uuidString)")
        let path = directory.appendingPathComponent("db.sqlite").path
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 1000, vfs: vfs)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=FULL")
        try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, v BLOB)")
        try connection.execute("INSERT INTO t VALUES (1, zeroblob(3000))")
        try connection.execute("PRAGMA synchronous=NORMAL")
        try connection.execute("INSERT INTO t VALUES (2, zeroblob(3000))")
        try connection.execute("INSERT INTO t VALUES (3, zeroblob(3000))")
        var seen: Set<[Int64]> = []
        for (index, loss) in ([.everything, .nothing] + Array(repeating: PowerCut.Loss.anySubset, count: 30))
            .enumerated()
        {
            // Cut a copy of the disk as it is now (the connection stays open and idle).
            let copy = try TestStore.makeDirectory()
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: directory, to: copy)
            try? FileManager.default.removeItem(atPath: copy.appendingPathComponent("db.sqlite-shm").path)
            var random = SeededRandom(seed: UInt64(index))
            try PowerCut.apply(
                to: copy.appendingPathComponent("disk").path, losing: loss,
                relocating: (directory.path, copy.path), using: &random)
            let reopened = try SQLiteConnection(
                path: copy.appendingPathComponent("db.sqlite").path, readOnly: false, busyTimeoutMilliseconds: 1000)
            defer { reopened.close() }
            let rows = try (1...3).filter { try reopened.integer("SELECT COUNT(*) FROM t WHERE n = \($0)") == 1 }
                .map(Int64.init)
            expectTrue([[1], [1, 2], [1, 2, 3]].contains(rows), "\(loss), seed \(index): rows \(rows)")
            if loss == .everything { expectEqual(rows, [1]) }
            if loss == .nothing { expectEqual(rows, [1, 2, 3]) }
            expectEqual(try reopened.text("PRAGMA integrity_check"), "ok", "\(loss), seed \(index)")
            seen.insert(rows)
        }
        expectGreaterThan(seen.count, 1, "every cut left the same rows")
    }

    // MARK: - Directories

    @Test func directoryChangesLastOnlyOnceTheirDirectoryIsSynced() throws {
        let created = directory.appendingPathComponent("created").path
        let deleted = directory.appendingPathComponent("deleted").path
        let renamed = directory.appendingPathComponent("renamed").path
        let target = directory.appendingPathComponent("target").path
        for syncs in [false, true] {
            for name in [created, deleted, renamed, target] { try? FileManager.default.removeItem(atPath: name) }
            try Data("old".utf8).write(to: URL(fileURLWithPath: deleted))
            try Data("new".utf8).write(to: URL(fileURLWithPath: renamed))
            try Data("replaced".utf8).write(to: URL(fileURLWithPath: target))
            let disk = try makeDisk()
            try Data("c".utf8).write(to: URL(fileURLWithPath: created))
            try disk.created(created)
            expectTrue(try disk.delete(deleted, syncsDirectory: false))
            expectFalse(FileManager.default.fileExists(atPath: deleted))
            expectTrue(try disk.rename(from: renamed, to: target) { rename(renamed, target) == 0 })
            if syncs { try disk.syncDirectory(directory.path) }
            var random = SeededRandom(seed: 1)
            let outcome = try PowerCut.apply(to: diskDirectory, losing: .everything, using: &random)
            expectEqual(FileManager.default.fileExists(atPath: created), syncs)
            expectEqual(
                FileManager.default.contents(atPath: deleted).map { String(decoding: $0, as: UTF8.self) },
                syncs ? nil : "old")
            expectEqual(FileManager.default.fileExists(atPath: renamed), !syncs)
            expectEqual(
                FileManager.default.contents(atPath: target).map { String(decoding: $0, as: UTF8.self) },
                syncs ? "new" : "replaced")
            expectEqual(outcome.directoryChangesUndone, syncs ? 0 : 3)
            expectEqual(try FileManager.default.contentsOfDirectory(atPath: diskDirectory), [])
        }
    }
}
