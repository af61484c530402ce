import Foundation
import TestSupport
import Testing

@testable import storesvc

struct InstanceLockTests {
    @Test func aSecondLockOnTheSameDatabaseIsRefusedNamingTheHolder() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("store.sqlite").path
        let first = try InstanceLock(databasePath: database)
        expectEqual(first.path, database + ".lock")
        do {
            _ = try InstanceLock(databasePath: database)
            Issue.record("the second lock was granted")
        } catch {
            expectEqual(error, .held(path: database + ".lock", owner: getpid()))
            expectTrue(error.description.contains("in use by another storesvc"))
        }
        _ = first
    }

    @Test func theLockIsFreeAgainOnceReleased() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("store.sqlite").path
        do { _ = try InstanceLock(databasePath: database) }
        _ = try InstanceLock(databasePath: database)
    }

    @Test func anUnwritableLocationIsReportedAsSuch() {
        #expect(throws: InstanceLockError.self) {
            try InstanceLock(databasePath: "/nonexistent-dir-for-ctxbus/store.sqlite")
        }
    }
}
