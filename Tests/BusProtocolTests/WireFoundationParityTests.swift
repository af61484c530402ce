import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire

/// The envelopes and hot methods written by `RPCMessage.write` compared with what Foundation's
/// `JSONEncoder` writes for the same message through Codable mirror types, both parsed back and
/// compared as values; and `JSONDecoder` reading what we write.
struct WireFoundationParityTests {
    // MARK: - Codable mirrors of the wire shapes

    private typealias FoundationObject = FoundationWireMirrors.Object
    private typealias FoundationGetResult = FoundationWireMirrors.GetResult

    private struct FoundationSort: Codable {
        var key: String
        var ascending: Bool
    }

    private struct FoundationFetchParams: Codable {
        var entity: String
        var `where`: String
        /// Omitted when empty, as `FetchParams` writes it.
        var args: [String: JSONValue]?
        var sort: [FoundationSort]
        var limit: Int
        var offset: Int
        var result: String
    }

    private struct FoundationChanged: Codable {
        var subscription: Int64
        var txn: Int64
        var author: String
        var inserted: [FoundationObject]
        var updated: [FoundationObject]
        var deleted: [String]
    }

    private struct FoundationRequest<Params: Codable>: Codable {
        var jsonrpc = "2.0"
        var id: Int64
        var method: String
        var params: Params
    }

    private struct FoundationResponse<Result: Codable>: Codable {
        var jsonrpc = "2.0"
        var id: String
        var result: Result
    }

    private struct FoundationEvent<Params: Codable>: Codable {
        var jsonrpc = "2.0"
        var method: String
        var params: Params
    }

    private struct FoundationErrorObject: Codable {
        var code: Int
        var message: String
        var data: JSONValue
    }

    private struct FoundationErrorResponse: Encodable {
        var id: Int64?
        var error: FoundationErrorObject

        enum CodingKeys: String, CodingKey { case jsonrpc, id, error }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode("2.0", forKey: .jsonrpc)
            if let id { try container.encode(id, forKey: .id) } else { try container.encodeNil(forKey: .id) }
            try container.encode(error, forKey: .error)
        }
    }

    // MARK: - Comparison

    private func expectSameValue(
        ours: [UInt8], foundation: Data, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let mine = try JSONParser().parse(ours)
        let theirs = try JSONParser().parse(foundation)
        #expect(
            numericallyEqual(mine, theirs),
            "ours: \(String(decoding: ours, as: UTF8.self))\nfoundation: \(String(decoding: foundation, as: UTF8.self))",
            sourceLocation: sourceLocation)
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(ours))
        #expect(numericallyEqual(decoded, mine), sourceLocation: sourceLocation)
    }

    private func storeObjects(_ random: inout RandomWireValues) -> [StoreObject] {
        (0..<Int.random(in: 0...4, using: &random.generator)).map { _ in
            StoreObject(
                id: random.objectID(), version: Int64.random(in: 1...1000, using: &random.generator),
                values: random.values())
        }
    }

    private func mirror(_ objects: [StoreObject]) -> [FoundationObject] {
        objects.map { FoundationObject(id: $0.id.description, version: $0.version, values: $0.values) }
    }

    // MARK: - Tests

    @Test(arguments: [1, 2, 3] as [UInt64])
    func storeGetResponsesMatchFoundation(seed: UInt64) throws {
        var random = RandomWireValues(seed: seed)
        for _ in 0..<100 {
            let objects = storeObjects(&random)
            let missing = (0..<Int.random(in: 0...3, using: &random.generator)).map { _ in random.objectID() }
            let id = random.name()
            let ours = RPCResponse(
                id: .string(id), result: StoreObjectsResult(txn: 42, objects: snapshots(objects), missing: missing))
            let foundation = FoundationResponse(
                id: id,
                result: FoundationGetResult(txn: 42, objects: mirror(objects), missing: missing.map(\.description)))
            try expectSameValue(ours: ours.jsonBytes(), foundation: JSONEncoder().encode(foundation))
        }
    }

    @Test(arguments: [4, 5] as [UInt64])
    func storeGetAndFetchRequestsMatchFoundation(seed: UInt64) throws {
        var random = RandomWireValues(seed: seed)
        for n in 0..<100 {
            let ids = (0..<Int.random(in: 0...6, using: &random.generator)).map { _ in random.objectID() }
            let get = RPCRequest(id: .number(Int64(n)), StoreGet.self, params: GetParams(ids: ids))
            let foundationGet = FoundationRequest(
                id: Int64(n), method: "store.get", params: ["ids": ids.map(\.description)])
            try expectSameValue(ours: get.jsonBytes(), foundation: JSONEncoder().encode(foundationGet))

            let predicate = random.name()
            let args = random.values()
            let fetch = FetchParams(
                entity: "Reading", predicate: predicate, arguments: args,
                sort: [ObjectSortDescriptor("time", ascending: false)],
                limit: n, offset: 3, resultType: .ids)
            let foundationFetch = FoundationFetchParams(
                entity: "Reading", where: predicate, args: args.isEmpty ? nil : args,
                sort: [FoundationSort(key: "time", ascending: false)],
                limit: n, offset: 3, result: "ids")
            try expectSameValue(
                ours: RPCRequest(id: .number(Int64(n)), StoreFetch.self, params: fetch).jsonBytes(),
                foundation: JSONEncoder().encode(
                    FoundationRequest(id: Int64(n), method: "store.fetch", params: foundationFetch)))
        }
    }

    @Test(arguments: [6, 7] as [UInt64])
    func storeChangedEventsMatchFoundation(seed: UInt64) throws {
        var random = RandomWireValues(seed: seed)
        for _ in 0..<100 {
            let inserted = storeObjects(&random)
            let updated = storeObjects(&random)
            let deleted = (0..<Int.random(in: 0...3, using: &random.generator)).map { _ in random.objectID() }
            let author = random.name()
            let event = ChangedEvent(
                subscription: 7, txn: 1236, author: author, inserted: inserted, updated: updated, deleted: deleted)
            let foundation = FoundationEvent(
                method: "store.changed",
                params: FoundationChanged(
                    subscription: 7, txn: 1236, author: author, inserted: mirror(inserted), updated: mirror(updated),
                    deleted: deleted.map(\.description)))
            try expectSameValue(ours: RPCEvent(event).jsonBytes(), foundation: JSONEncoder().encode(foundation))
        }
    }

    @Test(arguments: [8, 9] as [UInt64])
    func errorResponsesMatchFoundation(seed: UInt64) throws {
        var random = RandomWireValues(seed: seed)
        for n in 0..<100 {
            let data = random.value()
            let message = random.name()
            let id: Int64? = n.isMultiple(of: 3) ? nil : Int64(n)
            let ours = RPCResponse(
                id: id.map(RPCID.number), error: RPCError(code: .conflict, message: message, data: data))
            let foundation = FoundationErrorResponse(
                id: id, error: FoundationErrorObject(code: 409, message: message, data: data))
            try expectSameValue(ours: ours.jsonBytes(), foundation: JSONEncoder().encode(foundation))
        }
    }

    @Test func jsonDecoderReadsOurGetResponseIntoTheCodableMirror() throws {
        var random = RandomWireValues(seed: 10)
        let objects = storeObjects(&random)
        let ours = RPCResponse(id: "q", result: StoreObjectsResult(txn: 5, objects: snapshots(objects), missing: []))
        let decoded = try JSONDecoder().decode(
            FoundationResponse<FoundationGetResult>.self, from: Data(ours.jsonBytes()))
        expectEqual(decoded.id, "q")
        expectEqual(decoded.result.txn, 5)
        expectEqual(decoded.result.objects.map(\.id), objects.map(\.id.description))
        expectTrue(
            zip(decoded.result.objects, objects).allSatisfy { numericallyEqual(.object($0.values), .object($1.values)) }
        )
    }

    /// The objects as snapshots whose values are `json` values: written as the same JSON.
    private func snapshots(_ objects: [StoreObject]) -> [ObjectSnapshot] {
        objects.map { ObjectSnapshot(id: $0.id, version: $0.version, values: $0.values.mapValues(PropertyValue.json)) }
    }
}
