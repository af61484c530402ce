import CContextBusSQLite
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The writer copies what the checkpointer's passes leave behind, between its groups and after their answers,
/// never inside a commit (`SQLiteCheckpointer+Writer.swift`).
struct SQLiteCheckpointerWriterTests {
    let support = SQLiteCheckpointerTests()
    var threshold: Int { SQLiteCheckpointerTests.threshold }

    /// What the store had done when the writer began one of its checkpoints.
    struct CheckpointMoment: Sendable, Equatable {
        /// Saves whose completion had been called.
        var answered: Int
        /// Commits the WAL hook had seen since the saves began.
        var commits: Int
    }

    /// Records, for every checkpoint the writer runs between its groups, how many saves were answered and how many
    /// commits made.
    func recordWriterCheckpoints(of store: SQLiteStore, chain: SaveChain) -> Locked<[CheckpointMoment]> {
        let moments = Locked<[CheckpointMoment]>([])
        let checkpointer = store.checkpointer
        let baseline = checkpointer.commitsSeen.load(ordering: .relaxed)
        checkpointer.writerCheckpointHook.withLock { hook in
            hook = { insideCommit in
                // Only the last resort runs inside a commit (a pass that held the checkpoint lock too long).
                guard !insideCommit else { return }
                let moment = CheckpointMoment(
                    answered: chain.answered.load(ordering: .relaxed),
                    commits: checkpointer.commitsSeen.load(ordering: .relaxed) - baseline)
                moments.withLock { $0.append(moment) }
            }
        }
        return moments
    }

    @Test func aWriterThatNeverPausesCompletesTheCheckpointAfterTheAnswersAndKeepsTheWALBounded() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try support.makeStore(directory)
        defer { store.close() }
        // The checkpointer's thread never gets to run a pass: only the writer's fallback can restart the WAL.
        let release = store.checkpointer.hold()
        defer { release() }
        let chain = SaveChain(store: store, prefix: "P", limit: 5_000) { statistics in statistics.walRestarts >= 3 }
        let moments = recordWriterCheckpoints(of: store, chain: chain)
        let outcome = await chain.run()
        let statistics = store.checkpointStatistics
        expectEmpty(outcome.failures)
        expectGreaterThanOrEqual(statistics.walRestarts, 3)
        expectGreaterThanOrEqual(statistics.writerCheckpoints, 3)
        expectEqual(statistics.checkpointsInsideCommits, 0)
        expectEqual(statistics.checkpoints, 0)
        // Completed at two thresholds, after the group that took it there: one save more at most.
        expectTrue(statistics.largestWALPages >= SQLiteCheckpointer.writerFallbackFactor * threshold)
        expectTrue(statistics.largestWALPages < (SQLiteCheckpointer.writerFallbackFactor + 1) * threshold)
        // Each one-save group's answer was handed off before the writer checkpointed: as many answers as commits
        // (inside the commit, the commit would be counted and its save not yet answered).
        let recorded = moments.withLock { $0 }
        expectGreaterThanOrEqual(recorded.count, 3)
        for moment in recorded { expectEqual(moment.answered, moment.commits) }
    }

    @Test func underAWriterThatNeverPausesTheWALRestartsAndEverySaveSurvivesAReopen() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try support.makeStore(directory)
        let chain = SaveChain(store: store, prefix: "N", limit: 20_000) { statistics in statistics.walRestarts >= 3 }
        let moments = recordWriterCheckpoints(of: store, chain: chain)
        let outcome = await chain.run()
        let statistics = store.checkpointStatistics
        expectEmpty(outcome.failures)
        expectGreaterThanOrEqual(statistics.walRestarts, 3)
        expectGreaterThan(statistics.checkpoints, 0)
        expectEqual(statistics.failures, 0)
        for moment in moments.withLock({ $0 }) { expectEqual(moment.answered, moment.commits) }
        store.close()
        let reopened = try support.makeStore(directory)
        defer { reopened.close() }
        let result = try reopened.objects(with: outcome.ids)
        expectEqual(result.objects.count, outcome.ids.count)
        expectEmpty(result.missing)
    }

    @Test func aPassALongReadLeftUnfinishedIsCompletedByTheIdleWriterOnceTheReadEnds() async throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try support.makeStore(directory)
        defer { store.close() }
        let checkpointer = store.checkpointer
        try await support.offPool { for n in 0..<5 { _ = try store.save(support.insert("early-\(n)")) } }
        // A read transaction on the snapshot of the first five saves: no checkpoint copies a frame after it.
        let reader = try SQLiteConnection(
            path: store.url.path, readOnly: true, busyTimeoutMilliseconds: 5_000)
        defer { reader.close() }
        try reader.execute("BEGIN")
        _ = try reader.integer("SELECT count(*) FROM sqlite_master")
        // Saves until the WAL reaches the threshold, and no further: the next save asks for no other pass.
        try await support.offPool {
            var n = 0
            while checkpointer.lastWALPages.load(ordering: .relaxed) < SQLiteCheckpointerTests.threshold, n < 500 {
                _ = try store.save(support.insert("held-\(n)"))
                n += 1
            }
        }
        // The pass copied up to the reader's snapshot and synced the database, a second one copied nothing more,
        // and the thread asked the writer for the rest; the writer tried while the reader still held it back.
        try await support.waitUntil { store.checkpointStatistics.writerCheckpoints >= 1 }
        var statistics = store.checkpointStatistics
        // A second pass, back to back, copied nothing more: the thread stopped there.
        expectEqual(statistics.checkpoints, 2)
        expectEqual(statistics.completeCheckpoints, 0)
        expectEqual(statistics.databaseSyncs, 1)
        expectEqual(statistics.writerCheckpoints, 1)
        expectEqual(statistics.completeWriterCheckpoints, 0)
        let isWanted = checkpointer.isCompletionWanted.load(ordering: .relaxed)
        expectTrue(isWanted)
        try reader.execute("COMMIT")
        // After this save's answer, with no save waiting, the writer copies the rest; the next save restarts.
        _ = try await support.offPool { try store.save(support.insert("after-read")) }
        try await support.waitUntil { store.checkpointStatistics.writerCheckpoints >= 2 }
        statistics = store.checkpointStatistics
        expectEqual(statistics.writerCheckpoints, 2)
        expectEqual(statistics.completeWriterCheckpoints, 1)
        expectEqual(statistics.checkpoints, 2)
        _ = try await support.offPool { try store.save(support.insert("restarts")) }
        statistics = store.checkpointStatistics
        expectEqual(statistics.walRestarts, 1)
        expectEqual(statistics.checkpointsInsideCommits, 0)
        expectLessThan(checkpointer.lastWALPages.load(ordering: .relaxed), SQLiteCheckpointerTests.threshold)
    }

    @Test func theWriterCompletesOnlyWithNoSaveWaitingOrAtTheFallbackSizeAndOnlyOnceAWALIsCopied() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try support.makeStore(directory)
        defer { store.close() }
        let checkpointer = store.checkpointer
        // A WAL past the threshold, below the fallback, and a pass that asked for the rest.
        checkpointer.lastWALPages.store(threshold + 1, ordering: .relaxed)
        checkpointer.isCompletionWanted.store(true, ordering: .relaxed)
        let writer = try SQLiteConnection(path: store.url.path, readOnly: false, busyTimeoutMilliseconds: 5_000)
        defer { writer.close() }
        // A connection opens the WAL with its first read; a checkpoint before that reports nothing.
        _ = try writer.integer("SELECT count(*) FROM sqlite_master")
        expectFalse(checkpointer.completeOnTheWriter(writer.handle, savesWaiting: true))
        // At the fallback size the writer completes even with saves waiting.
        checkpointer.lastWALPages.store(SQLiteCheckpointer.writerFallbackFactor * threshold, ordering: .relaxed)
        expectTrue(checkpointer.completeOnTheWriter(writer.handle, savesWaiting: true))
        // That one copied the whole WAL: nothing is due until a commit appends to it again.
        let isCopied = checkpointer.isWALCopied.load(ordering: .relaxed)
        expectTrue(isCopied)
        expectFalse(checkpointer.completeOnTheWriter(writer.handle, savesWaiting: false))
        // Below the threshold (a WAL restarted since) nothing is due, whatever was asked.
        checkpointer.isWALCopied.store(false, ordering: .relaxed)
        checkpointer.lastWALPages.store(threshold - 1, ordering: .relaxed)
        checkpointer.isCompletionWanted.store(true, ordering: .relaxed)
        expectFalse(checkpointer.completeOnTheWriter(writer.handle, savesWaiting: false))
        expectEqual(store.checkpointStatistics.writerCheckpoints, 1)
    }
}

/// Saves one insert after another, each queued from the completion of the one before, on the writer's queue:
/// when the writer finishes a group, the next save is always waiting (a writer that never pauses).
final class SaveChain: Sendable {
    let store: SQLiteStore
    let prefix: String
    let limit: Int
    /// Checked after each answer: the chain stops once it holds.
    let isDone: @Sendable (SQLiteStore.CheckpointStatistics) -> Bool
    /// Saves answered so far.
    let answered = Atomic<Int>(0)
    private let state = Locked(
        (ids: [ObjectID](), failures: [String](), finished: CheckedContinuation<Void, Never>?.none))

    init(
        store: SQLiteStore, prefix: String, limit: Int,
        until isDone: @escaping @Sendable (SQLiteStore.CheckpointStatistics) -> Bool
    ) {
        self.store = store
        self.prefix = prefix
        self.limit = limit
        self.isDone = isDone
    }

    /// Runs the chain to its end; the IDs saved and the failures.
    func run() async -> (ids: [ObjectID], failures: [String]) {
        await withCheckedContinuation { continuation in
            state.withLock { $0.finished = continuation }
            save(0)
        }
        return state.withLock { ($0.ids, $0.failures) }
    }

    private func save(_ n: Int) {
        let request = SaveRequest(
            inserts: [
                .init(
                    id: ObjectID(entity: "Device", temporaryReference: "d"),
                    values: ["address": .string("\(prefix)\(n)")])
            ],
            durability: .memory)
        store.writerForSaves.submit(request) { [self] result in
            switch result {
            case .success(let saved): state.withLock { $0.ids += saved.ids.values }
            case .failure(let error): state.withLock { $0.failures.append("\(error)") }
            }
            answered.add(1, ordering: .relaxed)
            if n + 1 < limit, !isDone(store.checkpointStatistics) {
                save(n + 1)
            } else {
                let finished = state.withLock { state in
                    defer { state.finished = nil }
                    return state.finished
                }
                finished?.resume()
            }
        }
    }
}
