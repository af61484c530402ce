import CContextBusSQLite
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The store's WAL is checkpointed by `SQLiteCheckpointer` on its own thread, not inside the writer's commits.
struct SQLiteCheckpointerTests {
    /// A small threshold, so that a few hundred saves pass it many times over.
    static let threshold = 64

    func makeStore(_ directory: URL, threshold: Int = threshold) throws -> SQLiteStore {
        var configuration = SQLiteStore.Configuration(historyRetention: 50)
        configuration.checkpointThresholdPages = threshold
        return try SQLiteStore(
            url: directory.appendingPathComponent("store.sqlite"), model: .deviceReadings,
            configuration: configuration)
    }

    func insert(_ address: String) -> SaveRequest {
        SaveRequest(
            inserts: [
                .init(id: ObjectID(entity: "Device", temporaryReference: "d"), values: ["address": .string(address)])
            ],
            durability: .memory)
    }

    func walSize(_ directory: URL) -> Int64 {
        let path = directory.appendingPathComponent("store.sqlite-wal").path
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Runs `work` on a thread of its own (saves block on the writer) and awaits it.
    func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: "SQLiteCheckpointerTests").async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Waits (60 s at most: a guard, not a timing assertion) until `condition` holds.
    func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// Whether the checkpointer has caught up with the writer's last commit: no pass running, and the WAL below the
    /// threshold, or copied whole (by the thread's last pass or by the writer), so that the next commit restarts it.
    func isCaughtUp(_ store: SQLiteStore) -> Bool {
        let checkpointer = store.checkpointer
        guard checkpointer.isIdle else { return false }
        let pages = checkpointer.lastWALPages.load(ordering: .relaxed)
        let last = store.checkpointStatistics
        return pages < Self.threshold || checkpointer.isWALCopied.load(ordering: .acquiring)
            || (last.lastWasComplete && last.lastLogFrames == pages)
    }

    @Test func theWriterCommitsReachTheCheckpointersHookInsteadOfSQLitesAutocheckpoint() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("plain.sqlite").path
        let connection = try SQLiteConnection(path: path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode=WAL")
        try expectEqual(connection.integer("PRAGMA wal_autocheckpoint"), 1_000)
        let checkpointer = try SQLiteCheckpointer(path: path, thresholdPages: 1_000, busyTimeoutMilliseconds: 5_000)
        defer { checkpointer.stop() }
        try checkpointer.takeOverCheckpoints(of: connection)
        // The pragma reads 0 unless SQLite's own autocheckpoint hook is the one installed.
        try expectEqual(connection.integer("PRAGMA wal_autocheckpoint"), 0)
        try connection.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)")
        expectEqual(checkpointer.commitsSeen.load(ordering: .relaxed), 3)
        expectEqual(
            try connection.integer("PRAGMA journal_size_limit"),
            SQLiteCheckpointer.journalSizeLimit(1_000, pageSize: 4_096))
    }

    @Test func aStoreWhoseWALStaysBelowTheThresholdStartsNoThreadUntilItPassesIt() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        defer { store.close() }
        try await offPool { for n in 0..<3 { _ = try store.save(insert("few-\(n)")) } }
        expectLessThan(store.checkpointer.lastWALPages.load(ordering: .relaxed), Self.threshold)
        expectFalse(store.checkpointer.isThreadRunning)
        try await offPool { for n in 0..<60 { _ = try store.save(insert("many-\(n)")) } }
        expectTrue(store.checkpointer.isThreadRunning)
        try await waitUntil { store.checkpointStatistics.checkpoints > 0 }
        expectGreaterThan(store.checkpointStatistics.checkpoints, 0)
    }

    @Test func manySmallSavesAreCheckpointedByTheCheckpointerAndTheWALStaysBounded() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        defer { store.close() }
        let limit = SQLiteCheckpointer.journalSizeLimit(Self.threshold, pageSize: 4_096)
        // Rounds of saves; after each, wait until the WAL is copied whole (by the checkpointer's pass, or by the
        // writer completing it), so the next save restarts it (what a checkpointer that keeps up does; the wait
        // keeps the test independent of speed).
        for round in 0..<6 {
            try await offPool { for n in 0..<60 { _ = try store.save(insert("R\(round)-\(n)")) } }
            try await waitUntil { isCaughtUp(store) }
            expectTrue(isCaughtUp(store))
        }
        // This save restarts a WAL that was copied whole, and the restart cuts the file back to the limit.
        _ = try await offPool { try store.save(insert("last")) }
        let statistics = store.checkpointStatistics
        expectGreaterThanOrEqual(statistics.checkpoints, 6)
        expectTrue(statistics.framesCheckpointed >= 6 * Self.threshold)
        expectEqual(statistics.failures, 0)
        expectGreaterThanOrEqual(store.checkpointer.commitsSeen.load(ordering: .relaxed), 361)
        expectGreaterThanOrEqual(statistics.walRestarts, 1)
        // Restarted after a complete checkpoint, and cut back to the limit: bounded by it.
        expectLessThanOrEqual(walSize(directory), limit)
    }

    @Test func aCommitPastTheThresholdWakesTheCheckpointerAndTheIdleWriterThenLetsTheWALRestart() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        defer { store.close() }
        let checkpointer = store.checkpointer
        try await offPool {
            var n = 0
            while checkpointer.lastWALPages.load(ordering: .relaxed) < Self.threshold, n < 500 {
                _ = try store.save(insert("T\(n)"))
                n += 1
            }
        }
        expectGreaterThanOrEqual(checkpointer.lastWALPages.load(ordering: .relaxed), Self.threshold)
        // The thread's pass copied the WAL (nothing was appended meanwhile), then the idle writer checkpointed
        // between its transactions, with nothing left to copy, so that its next one restarts the WAL.
        try await waitUntil { store.checkpointStatistics.completeWriterCheckpoints > 0 }
        var statistics = store.checkpointStatistics
        expectEqual(statistics.checkpoints, 1)
        expectEqual(statistics.completeCheckpoints, 1)
        expectEqual(statistics.writerCheckpoints, 1)
        expectEqual(statistics.completeWriterCheckpoints, 1)
        _ = try await offPool { try store.save(insert("restarts")) }
        statistics = store.checkpointStatistics
        expectEqual(statistics.walRestarts, 1)
        expectEqual(statistics.checkpointsInsideCommits, 0)
        expectLessThan(checkpointer.lastWALPages.load(ordering: .relaxed), Self.threshold)
    }

    @Test func aWriterThatOutrunsTheCheckpointerCheckpointsItselfAtTheFallbackSize() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        defer { store.close() }
        let checkpointer = store.checkpointer
        let release = checkpointer.hold()
        defer { release() }
        let largest = try await offPool {
            var largest = 0
            var n = 0
            while store.checkpointStatistics.writerCheckpoints == 0, n < 2_000 {
                _ = try store.save(insert("F\(n)"))
                largest = max(largest, checkpointer.lastWALPages.load(ordering: .relaxed))
                n += 1
            }
            return largest
        }
        expectEqual(store.checkpointStatistics.writerCheckpoints, 1)
        expectEqual(store.checkpointStatistics.checkpointsInsideCommits, 0)
        expectTrue(largest >= SQLiteCheckpointer.writerFallbackFactor * Self.threshold)
        expectTrue(largest < (SQLiteCheckpointer.writerFallbackFactor + 1) * Self.threshold)
        // The fallback copied the whole WAL: the next commit restarts it.
        _ = try await offPool { try store.save(insert("after")) }
        expectLessThan(checkpointer.lastWALPages.load(ordering: .relaxed), Self.threshold)
    }

    @Test func withoutTheCheckpointerTheSameSavesGrowTheWALPastTheLimit() async throws {
        // The control of the test above: the writer never checkpoints on its own.
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory, threshold: 0)
        defer { store.close() }
        try await offPool { for n in 0..<361 { _ = try store.save(insert("N\(n)")) } }
        expectEqual(store.checkpointStatistics.checkpoints, 0)
        expectGreaterThan(walSize(directory), SQLiteCheckpointer.journalSizeLimit(Self.threshold, pageSize: 4_096))
    }

    @Test func readersKeepReadingWhileCheckpointsRun() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        defer { store.close() }
        let id = try #require(try store.save(insert("watched")).ids.values.first)
        let stop = Atomic<Bool>(false)
        let reads = DispatchGroup()
        let outcomes = Locked((reads: 0, failures: [String]()))
        for _ in 0..<2 {
            DispatchQueue.global().async(group: reads) {
                while !stop.load(ordering: .acquiring) {
                    do {
                        let found = try store.objects(with: [id]).objects.count
                        outcomes.withLock { $0.reads += 1 }
                        if found != 1 { outcomes.withLock { $0.failures.append("not found") } }
                    } catch {
                        outcomes.withLock { $0.failures.append("\(error)") }
                    }
                    // Paced, so that two readers leave the writer and the checkpointer CPU on a small host.
                    usleep(200)
                }
            }
        }
        try await offPool { for n in 0..<300 { _ = try store.save(insert("W\(n)")) } }
        try await waitUntil { store.checkpointStatistics.checkpoints > 0 }
        stop.store(true, ordering: .releasing)
        await withCheckedContinuation { continuation in reads.notify(queue: .global()) { continuation.resume() } }
        let result = outcomes.withLock { $0 }
        expectGreaterThan(store.checkpointStatistics.checkpoints, 0)
        expectGreaterThan(result.reads, 0)
        expectEmpty(result.failures)
    }

    @Test func theDatabaseFileGrowsInChunksSoThatCheckpointsRarelyChangeItsSize() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        try await offPool { for n in 0..<100 { _ = try store.save(insert("C\(n)")) } }
        store.close()
        let path = directory.appendingPathComponent("store.sqlite").path
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
        expectGreaterThan(size, 0)
        expectEqual(size % Int64(SQLiteCheckpointer.chunkBytes), 0)
    }

    @Test func theStoreReopensWithEverySaveAfterClose() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try makeStore(directory)
        let ids = try await offPool { try (0..<200).map { Array(try store.save(insert("K\($0)")).ids.values) } }
            .flatMap { $0 }
        try await waitUntil { store.checkpointStatistics.checkpoints > 0 }
        expectGreaterThan(store.checkpointStatistics.checkpoints, 0)
        store.close()
        expectEqual(walSize(directory), 0)
        let reopened = try makeStore(directory)
        defer { reopened.close() }
        let result = try reopened.objects(with: ids)
        expectEqual(result.objects.count, 200)
        expectEmpty(result.missing)
    }
}
