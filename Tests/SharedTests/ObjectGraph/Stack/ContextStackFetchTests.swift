import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ContextStackFetchTests {
    @Test func idsFetchedInTheBackgroundBecomeFaultsOnMainWhoseValuesAreRight() throws {
        let fixture = try StackFixture(.sqlite)
        let stack = fixture.stack
        let worker = stack.newWorker(name: "seed")
        try worker.performAndWait {
            for i in 0..<40 {
                let reading = worker.makeReading(
                    device: nil, characteristic: i % 2 == 0 ? "2a19" : "2a37", time: Double(i))
                reading["chain", as: String.self] = "chain-\(i)"
            }
            try worker.save()
        }
        try stack.saveRoot()

        let request = FetchRequest(
            entity: "Reading", predicate: try ObjectPredicate(format: "characteristic == '2a19'"),
            sortDescriptors: [ObjectSortDescriptor("time", ascending: false)])
        let ids = try stack.fetchIDsInBackground(request).first().get()
        expectEqual(ids.count, 20)

        let (faultsBefore, values, faultsAfter) = stack.main.performAndWait {
            let readings = stack.main.objects(with: ids)
            let faultsBefore = readings.map(\.isFault)
            let values = readings.map { ($0.string("characteristic"), $0.date("time"), $0.string("chain")) }
            return (faultsBefore, values, readings.map(\.isFault))
        }
        expectTrue(faultsBefore.allSatisfy { $0 })
        expectTrue(faultsAfter.allSatisfy { !$0 })
        expectTrue(values.allSatisfy { $0.0 == "2a19" })
        expectEqual(values.map { $0.1?.timeIntervalSince1970 }, stride(from: 38.0, through: 0, by: -2).map { $0 })
        expectEqual(values.map(\.2), stride(from: 38, through: 0, by: -2).map { "chain-\($0)" })
    }

    @Test func theBackgroundFetchSeesWhatTheRootHoldsUnsaved() throws {
        let fixture = try StackFixture()
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            worker.makeDevice("pending")
            try worker.save()
        }
        try expectEqual(fixture.storedDeviceCount(), 0)
        let ids = try fixture.stack.fetchIDsInBackground(FetchRequest(entity: "Device")).first().get()
        expectEqual(ids.count, 1)
        let name = fixture.stack.main.performAndWait { fixture.stack.main.objects(with: ids).first?.string("name") }
        expectEqual(name, "pending")
    }

    @Test func theFetchRunsOffTheCallingThreadOnAWorker() throws {
        let fixture = try StackFixture()
        let onMain = testMainQueue.sync {
            // Blocking on main while the worker fetches: the fetch must not need main's queue.
            (try? fixture.stack.fetchIDsInBackground(FetchRequest(entity: "Device")).first().get()) != nil
        }
        expectTrue(onMain)
    }

    @Test func aBadRequestFailsTheSignal() throws {
        let fixture = try StackFixture()
        let result = fixture.stack.fetchIDsInBackground(FetchRequest(entity: "Nope")).first()
        guard case .failure(.failed(.invalidRequest(let field, _))) = result else {
            Issue.record("expected an invalid request, got \(result)")
            return
        }
        expectEqual(field, "entity")
    }
}
