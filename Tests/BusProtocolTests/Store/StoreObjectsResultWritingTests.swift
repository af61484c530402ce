import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire

/// `StoreObjectsResult` writes `store.get`'s result straight from snapshots (`JSONWritable`): the same JSON as its
/// `json` tree and as Foundation's `JSONEncoder` for a Codable mirror, and the same frame when a responder answers
/// with it.
struct StoreObjectsResultWritingTests {
    private typealias FoundationObject = FoundationWireMirrors.Object
    private typealias FoundationGetResult = FoundationWireMirrors.GetResult

    /// Every kind of value a snapshot holds, with strings that need escaping and numbers at their limits.
    private static let sampleValues: [PropertyValue] = [
        .null, .string(""), .string("plain"), .string("quote \" backslash \\ newline \n tab \t nul \u{0} é 😀"),
        .int(0), .int(-7), .int(.max), .int(.min), .double(0.1), .double(-0.0), .double(1e300), .double(-2.5e-300),
        .bool(true), .bool(false), .date(Date(timeIntervalSince1970: 1_795_305_320.123)),
        .date(Date(timeIntervalSince1970: -1.5)), .binary(Data([0, 1, 2, 250, 255])), .binary(Data()),
        .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .json(.object(["nested": .array([.int(1), .string("x"), .null])])), .reference(ObjectID(string: "Device/3")!),
        .references([ObjectID(string: "Reading/1")!, ObjectID(string: "Reading/20")!]), .references([]),
    ]

    private func randomResult(_ generator: inout some RandomNumberGenerator) -> StoreObjectsResult {
        let objects = (0..<Int.random(in: 0...4, using: &generator)).map { index in
            var values: [String: PropertyValue] = [:]
            for key in 0..<Int.random(in: 0...8, using: &generator) {
                values["key\(key)\(key % 3 == 0 ? " \"q\"" : "")"] = Self.sampleValues.randomElement(using: &generator)!
            }
            return ObjectSnapshot(
                id: ObjectID(string: "Device/\(index + 1)")!, version: Int64.random(in: 1...1000, using: &generator),
                values: values)
        }
        let missing = (0..<Int.random(in: 0...3, using: &generator)).map { ObjectID(string: "Reading/\($0 + 9)")! }
        return StoreObjectsResult(
            txn: Int64.random(in: 0...Int64.max, using: &generator), objects: objects, missing: missing)
    }

    private func written(_ result: StoreObjectsResult) throws -> [UInt8] {
        var output: [UInt8] = []
        try result.writeJSON(into: &output, writer: JSONWriter())
        return output
    }

    @Test func writesTheSameJSONAsItsJSONTree() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let result = randomResult(&generator)
            let bytes = try written(result)
            let parsed = try JSONParser().parse(bytes)
            expectTrue(numericallyEqual(parsed, result.json), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func writesWhatFoundationsEncoderWritesForTheCodableMirror() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<100 {
            let result = randomResult(&generator)
            let mirror = FoundationGetResult(
                txn: result.txn,
                objects: result.objects.map {
                    FoundationObject(
                        id: $0.id.description, version: $0.version, values: $0.values.mapValues(\.jsonValue))
                }, missing: result.missing.map(\.description))
            let ours = try JSONParser().parse(try written(result))
            let theirs = try JSONParser().parse(try JSONEncoder().encode(mirror))
            expectTrue(numericallyEqual(ours, theirs))
            // And Foundation's decoder reads ours back into the mirror.
            let decoded = try JSONDecoder().decode(FoundationGetResult.self, from: Data(try written(result)))
            expectEqual(decoded.objects.map(\.id), mirror.objects.map(\.id))
            expectEqual(decoded.missing, mirror.missing)
        }
    }

    @Test func anEmptyResultIsWrittenWithEmptyArrays() throws {
        let bytes = try written(StoreObjectsResult(txn: 7, objects: [], missing: []))
        expectEqual(String(decoding: bytes, as: UTF8.self), #"{"txn":7,"objects":[],"missing":[]}"#)
    }

    @Test func aNonFiniteNumberIsAnErrorNotJSON() {
        let result = StoreObjectsResult(
            txn: 1,
            objects: [ObjectSnapshot(id: ObjectID(string: "Device/1")!, version: 1, values: ["x": .double(.nan)])],
            missing: [])
        #expect(throws: JSONWriteError.self) { try written(result) }
    }

    @Test func aResponderAnswersWithTheSameMessageAsTheTypedResult() throws {
        let bus = try TestBus()
        let result = StoreObjectsResult(
            txn: 12,
            objects: [
                ObjectSnapshot(
                    id: ObjectID(string: "Device/1")!, version: 3,
                    values: ["name": .string("thermo \"1\""), "seen": .date(Date(timeIntervalSince1970: 86_400.5))])
            ], missing: [ObjectID(string: "Device/2")!])
        bus.server.register(
            StoreGet.self,
            responder: { _, params, responder in
                if params.ids.count == 1 {
                    responder.succeed(writing: result)
                } else {
                    var broken = result
                    broken.objects[0].values["bad"] = .double(.infinity)
                    responder.succeed(writing: broken)
                }
            })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":"g","method":"store.get","params":{"ids":["Device/1"]}}"#)
        let answer = try #require(peer.readMessage())
        expectTrue(numericallyEqual(answer, RPCResponse(id: "g", result: result).json))
        // A result that cannot be written is answered -32603 and reported, and the connection carries on.
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"store.get","params":{"ids":["Device/1","Device/2"]}}"#)
        let failure = try #require(peer.readMessage())
        expectEqual(failure["id"], .int(2))
        expectEqual(failure.errorCode, -32603)
        expectTrue(bus.handlerErrors.wait(forCount: 1))
        peer.send(#"{"jsonrpc":"2.0","id":3,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .int(3))
    }
}
