import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

/// Bad input to the store's side of replication (docs/protocol.md, "Replication": `store.replica`,
/// `store.replicaChanges`, `store.replicaIDs`, `store.save`'s `origin`) against a real `storesvc`: each gets its
/// error naming the field, and afterwards the service answers and the objects saved before are unchanged. Also
/// `store.stats`' `replica`.
struct StoreServiceReplicaBadInputTests {
    func withService(_ body: (CatalogueService) async throws -> Void) async throws {
        let service = try await CatalogueService.start()
        defer { service.stop() }
        try await body(service)
        #expect(try await service.call("bus.ping", "{}")["result"] == .object([:]), "a new connection works")
        try await expectEqual(service.snapshot(), service.saved, "the data saved before is intact")
    }

    func expectInvalid(
        _ answer: JSONValue, field: String, _ message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = answer["error"]
        expectEqual(error?["code"]?.intValue, -32602, "\(answer)", sourceLocation: sourceLocation)
        expectEqual(error?["data"]?["field"]?.stringValue, field, "\(answer)", sourceLocation: sourceLocation)
        expectTrue(
            error?["message"]?.stringValue?.contains(message) == true, "\(answer)", sourceLocation: sourceLocation)
    }

    static let origin = #""origin":{"gateway":"b","txn":1,"clock":1795860000123456}"#
    static let insert = #""insert":[{"entity":"Device","ref":"x","values":{"address":"EE:EE:EE:EE:EE:EE"}}]"#

    @Test func aGatewayNameThatIsNotOneIsRefused() async throws {
        try await withService { service in
            expectInvalid(try await service.call("store.replica", #"{"gateway":"a.b"}"#), field: "gateway", "letters")
            expectInvalid(try await service.call("store.replica", #"{"gateway":""}"#), field: "gateway", "letters")
            expectInvalid(try await service.call("store.replica", #"{"gateway":7}"#), field: "gateway", "string")
            expectInvalid(
                try await service.call("store.replica", #"{"published":-1}"#), field: "published", "at least 0")
            expectInvalid(try await service.call("store.replica", #"{"position":"x"}"#), field: "position", "integer")
            // Nothing was registered.
            expectEqual(try await service.call("store.replica", "{}")["result"]?["gateway"], .null)
        }
    }

    @Test func aStoreRegisteredAsOneGatewayRefusesAnotherName() async throws {
        try await withService { service in
            expectEqual(
                try await service.call("store.replica", #"{"gateway":"a"}"#)["result"]?["gateway"], .string("a"))
            expectEqual(
                try await service.call("store.replica", #"{"gateway":"a"}"#)["result"]?["gateway"], .string("a"))
            expectInvalid(
                try await service.call("store.replica", #"{"gateway":"b"}"#), field: "gateway",
                "this store is registered as gateway 'a', not 'b'")
            expectEqual(try await service.call("store.replica", "{}")["result"]?["gateway"], .string("a"))
        }
    }

    @Test func progressOnAStoreThatIsNotRegisteredIsRefused() async throws {
        try await withService { service in
            expectInvalid(
                try await service.call("store.replica", #"{"published":1}"#), field: "gateway",
                "the store is not registered as a gateway")
            expectInvalid(
                try await service.call("store.replica", #"{"position":4}"#), field: "gateway",
                "the store is not registered as a gateway")
        }
    }

    @Test func anOriginOnAStoreThatIsNotRegisteredIsRefused() async throws {
        try await withService { service in
            expectInvalid(
                try await service.call("store.save", "{\(Self.insert),\(Self.origin)}"), field: "origin",
                "the store is not registered as a gateway of a fleet")
        }
    }

    @Test func anOriginNamingTheStoresOwnGatewayOrMalformedIsRefused() async throws {
        try await withService { service in
            _ = try await service.call("store.replica", #"{"gateway":"b"}"#)
            expectInvalid(
                try await service.call("store.save", "{\(Self.insert),\(Self.origin)}"), field: "origin.gateway",
                "a transaction of this gateway cannot be applied to it again")
            expectInvalid(
                try await service.call("store.save", #"{"insert":[],"origin":{"gateway":"c","clock":1}}"#),
                field: "origin.txn", "required")
            expectInvalid(
                try await service.call("store.save", #"{"insert":[],"origin":{"gateway":"c","txn":1,"clock":"now"}}"#),
                field: "origin.clock", "integer")
            expectInvalid(
                try await service.call(
                    "store.save", #"{"insert":[],"origin":{"gateway":"c","txn":1,"clock":1,"fleetIDs":[]}}"#),
                field: "origin.fleetIDs", "object")
            expectInvalid(
                try await service.call("store.save", #"{"insert":[],"origin":"c"}"#), field: "origin", "object")
        }
    }

    @Test func replicaChangesAndReplicaIDsTakeOnlyTheirParams() async throws {
        try await withService { service in
            expectInvalid(
                try await service.call("store.replicaChanges", #"{"since":-1}"#), field: "since", "at least 0")
            expectInvalid(
                try await service.call("store.replicaChanges", #"{"since":0,"limit":0}"#), field: "limit", "at least 1")
            expectInvalid(try await service.call("store.replicaIDs", "{}"), field: "fleetIDs", "required")
            expectInvalid(
                try await service.call("store.replicaIDs", #"{"fleetIDs":"a:Device/1"}"#), field: "fleetIDs", "array")
            expectInvalid(
                try await service.call("store.replicaIDs", #"{"fleetIDs":[1]}"#), field: "fleetIDs[0]", "string")
            // Well-formed: nothing known, and the store's own history as change sets with clocks.
            expectEqual(
                try await service.call("store.replicaIDs", #"{"fleetIDs":["b:Device/9","nonsense"]}"#)["result"],
                .object(["ids": .object([:])]))
            let changes = try await service.call("store.replicaChanges", #"{"since":0}"#)["result"]
            expectEqual(changes?["transactions"]?.arrayValue?.count, 1)
        }
    }

    /// History pruned (the store keeps 2 transactions, and the fleet published them all): `store.replicaChanges`
    /// from before it is `410`, as `store.history`'s; `store.stats` carries the replica state.
    @Test func replicaChangesFromPrunedHistoryIsGoneAndStatsShowTheReplica() async throws {
        let service = try await CatalogueService.start(arguments: ["--history", "2"])
        defer { service.stop() }
        let unregistered = try await service.call("store.stats", "{}")["result"]
        expectNil(unregistered?["replica"])
        _ = try await service.call("store.replica", #"{"gateway":"a"}"#)
        for i in 0..<5 {
            _ = try await service.call(
                "store.save", #"{"insert":[{"entity":"Device","values":{"address":"AA:00:00:00:00:0\#(i)"}}]}"#)
        }
        _ = try await service.call("store.replica", #"{"published":6,"position":3}"#)
        _ = try await service.call(
            "store.save", #"{"insert":[{"entity":"Device","values":{"address":"AA:00:00:00:00:09"}}]}"#)
        let gone = try await service.call("store.replicaChanges", #"{"since":0}"#)["error"]
        expectEqual(gone?["code"]?.intValue, 410)
        expectEqual(gone?["data"]?["since"]?.intValue, 0)
        let replica = try await service.call("store.stats", "{}")["result"]?["replica"]
        expectEqual(replica?["gateway"], .string("a"))
        expectEqual(replica?["published"]?.intValue, 6)
        expectEqual(replica?["position"]?.intValue, 3)
        expectEqual(replica?["lastTxn"]?.intValue, 7)
        expectEqual(replica?["applied"], .object([:]))
        expectEqual(try await service.call("bus.ping", "{}")["result"], .object([:]))
    }
}
