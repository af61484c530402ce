import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// Concurrent saves from many threads, against every store.
struct StoreConcurrencyTests {
    @Test(arguments: StoreFactory.all)
    func concurrentSavesAllCommitWithDistinctIncreasingTxns(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let txns = Locked<[Int: [Int64]]>([:])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            var mine: [Int64] = []
            for i in 0..<25 {
                do {
                    mine.append(
                        try store.commit(
                            SaveRequest(inserts: [
                                .init(id: tmp("Device", "d"), values: ["address": .string("\(worker)-\(i)")])
                            ])
                        ).txn)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            txns.withLock { $0[worker] = mine }
        }
        expectEmpty(failures.withLock { $0 })
        let perWorker = txns.withLock { $0 }
        for (_, list) in perWorker { expectTrue(list == list.sorted() && Set(list).count == list.count) }
        let all = perWorker.values.flatMap { $0 }
        expectEqual(all.sorted(), Array(1...200))
        try expectEqual(store.all("Device").count, 200)
        try expectEqual(store.history(since: 150, limit: 100).map(\.txn), Array(151...200))
    }

    @Test(arguments: StoreFactory.all)
    func aFailingSaveAmongConcurrentOnesFailsOnlyItself(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("x")])
        let outcomes = Locked<[Int: Result<Int64, StoreError>]>([:])
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let request =
                worker == 3
                ? SaveRequest(updates: [.init(id: device, version: 99, values: ["name": .string("stale")])])
                : SaveRequest(inserts: [.init(id: tmp("Device", "d"), values: ["address": .string("\(worker)")])])
            let outcome: Result<Int64, StoreError>
            do { outcome = .success(try store.commit(request).txn) } catch let error as StoreError {
                outcome = .failure(error)
            } catch {
                outcome = .failure(.unavailable("\(error)"))
            }
            outcomes.withLock { $0[worker] = outcome }
        }
        let all = outcomes.withLock { $0 }
        for (worker, outcome) in all {
            switch outcome {
            case .success: expectNotEqual(worker, 3)
            case .failure(let error):
                expectEqual(worker, 3)
                guard case .conflict = error else {
                    Issue.record("expected a conflict, got \(error)")
                    continue
                }
            }
        }
        try expectEqual(store.all("Device").count, 8)
        try expectEqual(store.snapshot(device)?.values["name"], .null)
    }
}
