import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import storesvc

struct StoreRequestHandlersTests {
    let fixture: TemporarySQLiteStore
    let handlers: StoreRequestHandlers

    init() throws {
        fixture = try TemporarySQLiteStore(historyRetention: 1000)
        handlers = StoreRequestHandlers(
            store: fixture.store, hub: SubscriptionHub(store: fixture.store, log: .silent), log: .silent)
    }

    private func save(_ text: String) -> Result<SaveResult, RPCError> {
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<SaveResult, RPCError>?>(nil)
        let request: SaveRequest
        do {
            request = try SaveRequest(json: json(text), model: fixture.store.model)
        } catch {
            return .failure(error)
        }
        handlers.save(request) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.withLock { $0! }
    }

    private func failure(of result: Result<SaveResult, RPCError>) -> RPCError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    private func insertDeviceWithReading() throws -> SaveResult {
        try save(
            """
            {"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:BB","name":"thermo"}},
              {"entity":"Reading","ref":"r","values":{"characteristic":"2a19","value":"AQ==",
                "time":"2024-01-01T00:00:00.000Z","device":"d"}}],"author":"test"}
            """
        ).get()
    }

    @Test func modelIsServedWithItsVersionHash() {
        let model = handlers.model()
        expectEqual(model.version, Model.deviceReadings.versionHash)
        expectEqual(model.model, .deviceReadings)
    }

    @Test func saveAnswersTheRefsIDsAndEveryNewVersion() throws {
        let result = try insertDeviceWithReading()
        let device = try #require(result.id(ref: "d"))
        let reading = try #require(result.id(ref: "r"))
        expectEqual(device.entity, "Device")
        expectEqual(reading.entity, "Reading")
        expectEqual(result.versions[device], 1)
        expectEqual(result.versions[reading], 1)
        expectEqual(result.txn, fixture.store.lastTransaction)
        let objects = try handlers.get(GetParams(ids: [reading, ObjectID(entity: "Reading", number: 99)]))
        expectEqual(objects.missing, [ObjectID(entity: "Reading", number: 99)])
        expectEqual(objects.objects.first?.values["device"], .reference(device))
        expectEqual(objects.objects.first?.values["value"], .binary(Data([1])))
    }

    @Test func insertsWithoutRefsAreReportedByIndex() throws {
        let result = try save(#"{"insert":[{"entity":"Device","values":{"address":"X"}}]}"#).get()
        expectEqual(result.id(ref: "insert[0]")?.entity, "Device")
    }

    @Test func fetchReadsWhereWithArgsSortAndResultTypes() throws {
        for name in ["tha", "thb", "other"] {
            _ = try save(#"{"insert":[{"entity":"Device","values":{"address":"\#(name)","name":"\#(name)"}}]}"#).get()
        }
        let params = try FetchParams(
            json: json(
                #"{"entity":"Device","where":"name BEGINSWITH $p","args":{"p":"th"},"sort":[{"key":"name","ascending":false}]}"#
            ))
        let fetched = try handlers.fetch(params)
        guard case .objects(let objects) = fetched.content else {
            Issue.record("expected objects")
            return
        }
        expectEqual(objects.map { $0.values["name"] }, [.string("thb"), .string("tha")])
        expectEqual(fetched.txn, 3)
        var count = params
        count.resultType = .count
        try expectEqual(handlers.fetch(count).content, .count(2))
    }

    @Test func predicateSyntaxErrorsNameWhereAndThePosition() {
        do {
            _ = try handlers.fetch(FetchParams(entity: "Device", predicate: "name == "))
            Issue.record("expected an error")
        } catch {
            expectEqual(error.code, .invalidParams)
            expectEqual(error.field, "where")
            expectEqual(error.data?["position"], .int(8))
        }
    }

    @Test func predicatesThatDoNotFitTheModelNameWhere() {
        do {
            _ = try handlers.fetch(FetchParams(entity: "Device", predicate: "colour == 'red'"))
            Issue.record("expected an error")
        } catch {
            expectEqual(error.code, .invalidParams)
            expectEqual(error.field, "where")
        }
    }

    @Test func unknownEntitiesAndSortKeysAreNamed() {
        for (params, field) in [
            (FetchParams(entity: "Gadget"), "entity"),
            (FetchParams(entity: "Device", sort: [ObjectSortDescriptor("colour")]), "sort[0].key"),
        ] {
            do {
                _ = try handlers.fetch(params)
                Issue.record("expected an error for \(field)")
            } catch {
                expectEqual(error.code, .invalidParams)
                expectEqual(error.field, field)
            }
        }
    }

    @Test func staleUpdateUnderErrorPolicyIsAConflictWithCurrentValues() throws {
        let device = try #require(try insertDeviceWithReading().id(ref: "d"))
        _ = try save(#"{"update":[{"id":"\#(device)","version":1,"values":{"name":"first"}}]}"#).get()
        let stale = save(#"{"update":[{"id":"\#(device)","version":1,"values":{"name":"second"}}]}"#)
        let error = try #require(failure(of: stale))
        expectEqual(error.code, .conflict)
        let conflict = try SaveConflict(json: try #require(error.data?["conflicts"]?.arrayValue?.first))
        expectEqual(conflict.id, device)
        expectEqual(conflict.version, 1)
        expectEqual(conflict.currentVersion, 2)
        expectEqual(conflict.currentValues?["name"], .string("first"))
        let trumped = try save(
            #"{"update":[{"id":"\#(device)","version":1,"values":{"name":"second"}}],"mergePolicy":"objectTrump"}"#
        ).get()
        expectEqual(trumped.versions[device], 3)
    }

    @Test func updateOfAMissingObjectIsNotFound() throws {
        let error = try #require(failure(of: save(#"{"update":[{"id":"Device/404","values":{"name":"x"}}]}"#)))
        expectEqual(error.code, .notFound)
        expectEqual(error.data?["id"], .string("Device/404"))
    }

    @Test func validationFailuresNameTheInsertByRef() throws {
        let error = try #require(failure(of: save(#"{"insert":[{"entity":"Reading","ref":"r9","values":{}}]}"#)))
        expectEqual(error.code, .validationFailed)
        let issues = try #require(error.data?["errors"]?.arrayValue).map { try ValidationIssue(json: $0) }
        expectTrue(issues.contains { $0.ref == "r9" && $0.key == "time" })
        expectTrue(issues.allSatisfy { $0.id == nil })
    }

    @Test func savesCalledInOrderAreAppliedInThatOrder() throws {
        let device = try #require(try insertDeviceWithReading().id(ref: "d"))
        let results = Locked<[Int: Int64]>([:])
        let all = DispatchGroup()
        for i in 0..<40 {
            all.enter()
            handlers.save(
                try SaveRequest(
                    json: json(#"{"update":[{"id":"\#(device)","values":{"name":"n\#(i)"}}]}"#),
                    model: fixture.store.model)
            ) { outcome in
                if case .success(let result) = outcome { results.withLock { $0[i] = result.txn } }
                all.leave()
            }
        }
        all.wait()
        let txns = results.withLock { $0 }
        expectEqual(txns.count, 40)
        expectEqual((0..<40).map { txns[$0]! }, (0..<40).map { txns[0]! + Int64($0) })
        let current = try handlers.get(GetParams(ids: [device]))
        expectEqual(current.objects.first?.values["name"], .string("n39"))
    }

    @Test func historyListsTransactionsAfterSince() throws {
        let first = try insertDeviceWithReading()
        let device = try #require(first.id(ref: "d"))
        _ = try save(#"{"delete":[{"id":"\#(device)"}],"author":"cleaner"}"#).get()
        let history = try handlers.history(HistoryParams(since: first.txn - 1))
        expectEqual(history.transactions.map(\.txn), [first.txn, first.txn + 1])
        expectEqual(history.transactions[0].author, "test")
        expectEqual(Set(history.transactions[0].inserted), Set(first.ids.values))
        expectTrue(history.transactions[1].deleted.contains(device))
        try expectEqual(handlers.history(HistoryParams(since: first.txn - 1, limit: 1)).transactions.count, 1)
    }

    @Test func statsCountSavesCommitsAndTheHistoryRange() throws {
        _ = try insertDeviceWithReading()
        _ = save(#"{"update":[{"id":"Device/777","values":{"name":"x"}}]}"#)
        let stats = handlers.stats(connections: 3)
        expectEqual(stats.connections, 3)
        expectEqual(stats.saves, 2)
        expectEqual(stats.commits, 2)
        expectEqual(stats.groupSizes[1], 2)
        expectEqual(stats.historyOldest, 1)
        expectEqual(stats.historyNewest, 1)
        expectEqual(stats.other["failedSaves"], .int(1))
        expectEqual(stats.other["lastTxn"], .int(1))
        // One page of each table and index the insert changed (Device, its address index, Reading, its two
        // indexes, the history; not the counters: its IDs are within what the store reserved when it opened,
        // `NumberReservations`); the failed update wrote none.
        expectEqual(stats.other["walFrames"], .int(6))
        // A durable commit's frames reach the file with one write (`WALWriteGathering`).
        expectEqual(stats.other["walWrites"], .int(1))
    }
}
