import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

struct SQLiteStoreCompletionSaveTests {
    let store: TestStore
    var sqlite: SQLiteStore { store.store as! SQLiteStore }

    init() throws {
        store = try StoreFactory.sqlite.make(.deviceReadingsForCompletionTests)
    }

    private func insert(_ address: String) -> SaveRequest {
        SaveRequest(inserts: [
            .init(id: ObjectID(entity: "Device", temporaryReference: "d"), values: ["address": .string(address)])
        ])
    }

    @Test func savesQueuedInOrderCommitInThatOrderInOneGroup() throws {
        let resume = sqlite.suspendWriter()
        let outcomes = Locked<[Int: Int64]>([:])
        let done = DispatchGroup()
        for i in 0..<20 {
            done.enter()
            sqlite.save(insert("A\(i)")) { result in
                outcomes.withLock { $0[i] = try? result.get().txn }
                done.leave()
            }
        }
        // Nothing blocked the caller: the 20 saves wait for the writer together.
        expectEqual(sqlite.pendingSaveCount, 20)
        resume()
        done.wait()
        let txns = outcomes.withLock { $0 }
        expectEqual((0..<20).map { txns[$0] ?? -1 }, Array(1...20))
        expectEqual(sqlite.statistics.groups, 1)
        expectEqual(sqlite.statistics.groupSizes, [20: 1])
    }

    @Test func failuresReachTheCompletionAlone() throws {
        let resume = sqlite.suspendWriter()
        let outcomes = Locked<[String]>([])
        let done = DispatchGroup()
        let missing = SaveRequest(updates: [
            .init(id: ObjectID(entity: "Device", number: 99), version: nil, values: ["name": .string("x")])
        ])
        for request in [insert("ok"), missing, insert("ok too")] {
            done.enter()
            sqlite.save(request) { result in
                outcomes.withLock { list in
                    switch result {
                    case .success(let saved): list.append("txn \(saved.txn)")
                    case .failure(let error): list.append("\(error)")
                    }
                }
                done.leave()
            }
        }
        resume()
        done.wait()
        expectEqual(
            Set(outcomes.withLock { $0 }),
            [
                "txn 1", "txn 2", StoreError.notFound(ObjectID(entity: "Device", number: 99)).description,
            ])
    }

    @Test func aClosedStoreAnswersUnavailable() {
        sqlite.close()
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<SaveResult, any Error>?>(nil)
        sqlite.save(insert("late")) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        #expect(throws: StoreError.unavailable("the store is closed")) { try outcome.withLock { $0! }.get() }
    }
}

extension Model {
    fileprivate static let deviceReadingsForCompletionTests = Model.deviceReadings
}
