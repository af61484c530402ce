import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

/// One named test per hostile input against a real `storesvc`: each gets its exact error, and afterwards a new
/// connection still works and the objects saved before are unchanged. Extends `StoreServiceHostileInputTests`
/// (not JSON, a bare invalid-UTF-8 frame, batches, unknown methods, an oversized and a zero-length frame, requests
/// before hello, a peer closing mid-frame), which this file does not repeat.
struct StoreServiceBadInputCatalogueTests {
    /// Runs `body` against a fresh service, then checks that the service is up and the setup data intact.
    func withService(_ body: (CatalogueService) async throws -> Void) async throws {
        let service = try await CatalogueService.start()
        defer { service.stop() }
        try await body(service)
        #expect(try await service.call("bus.ping", "{}")["result"] == .object([:]), "a new connection works")
        try await expectEqual(service.snapshot(), service.saved, "the data saved before is intact")
    }

    /// `error.code`, `error.message` and `error.data.field` of an answer.
    func error(_ answer: JSONValue) -> (code: Int64?, message: String?, field: String?) {
        let error = answer["error"]
        return (error?["code"]?.intValue, error?["message"]?.stringValue, error?["data"]?["field"]?.stringValue)
    }

    // MARK: - Framing and JSON

    @Test func aFourGigabyteLengthPrefixIsAFramingErrorThenTheConnectionCloses() async throws {
        try await withService { service in
            let (messages, _) = try await service.exchange([0xFF, 0xFF, 0xFF, 0xFF], reading: nil)
            expectEqual(messages.count, 1)
            expectEqual(messages.first?["id"], .null)
            expectEqual(error(messages.first ?? .null).code, -32600)
            expectEqual(
                error(messages.first ?? .null).message,
                "framing error: a frame of 4294967295 bytes exceeds the limit of 16777216 bytes")
        }
    }

    @Test func tenThousandLevelsOfJSONNestingAreAParseErrorAndTheConnectionStaysOpen() async throws {
        try await withService { service in
            let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
            let request = framedRequest(
                method: "store.fetch", params: Array(#"{"entity":"Device","args":{"a":\#(deep)}}"#.utf8))
            let (messages, stillOpen) = try await service.exchange(request, reading: 1)
            expectEqual(messages.first?["id"], .null)
            expectEqual(error(messages.first ?? .null).code, -32700)
            expectEqual(
                error(messages.first ?? .null).message,
                "parse error: invalid JSON at byte 596: arrays and objects nested deeper than 512 levels")
            expectTrue(stillOpen)
        }
    }

    static let invalidUTF8Values: [(String, [UInt8], String)] = [
        ("overlong '/'", [0xC0, 0xAF], "invalid UTF-8 in a string"),
        ("encoded surrogate", [0xED, 0xA0, 0x80], "invalid UTF-8 in a string"),
        ("truncated sequence", [0xE2, 0x82], "invalid UTF-8 in a string"),
        ("escaped lone surrogate", Array(#"\ud800"#.utf8), #"unpaired surrogate \uD800 (needs a high-low pair)"#),
    ]

    @Test(arguments: invalidUTF8Values)
    func invalidUTF8InsideASavedStringIsAParseErrorAndSavesNothing(
        _ label: String, bytes: [UInt8], reason: String
    ) async throws {
        try await withService { service in
            let params =
                Array(#"{"insert":[{"entity":"Device","values":{"address":""#.utf8) + bytes + Array(#""}}]}"#.utf8)
            let (messages, stillOpen) = try await service.exchange(
                framedRequest(method: "store.save", params: params), reading: 1)
            expectEqual(error(messages.first ?? .null).code, -32700, "\(label)")
            expectEqual(error(messages.first ?? .null).message?.hasSuffix(reason), true, "\(label): \(messages)")
            expectTrue(stillOpen)
        }
    }

    // MARK: - Numbers

    static let outOfRangeNumbers: [(String, String, Int64, String, String?)] = [
        (
            "store.fetch", #"{"entity":"Device","limit":9223372036854775808}"#, -32602,
            "invalid params: limit: expected an integer", "limit"
        ),
        (
            "store.history", #"{"since":18446744073709551616}"#, -32602, "invalid params: since: expected an integer",
            "since"
        ),
        (
            "store.history", #"{"since":-9223372036854775808}"#, -32602, "invalid params: since: must be at least 0",
            "since"
        ),
        (
            "store.save", #"{"update":[{"id":"Device/1","version":9223372036854775808,"values":{"name":"x"}}]}"#,
            -32602, "invalid params: update[0].version: expected an integer", "update[0].version"
        ),
        (
            "store.get", #"{"ids":["Device/99999999999999999999"]}"#, -32602,
            #"invalid params: ids[0]: expected an object ID like "Entity/12""#, "ids[0]"
        ),
        (
            "store.fetch", #"{"entity":"Device","limit":1e400}"#, -32700,
            "parse error: invalid JSON at byte 83: number out of the range of a 64-bit double", nil
        ),
    ]

    @Test(arguments: outOfRangeNumbers)
    func numbersOutOfInt64RangeAreRefusedNamingTheField(
        method: String, params: String, code: Int64, message: String, field: String?
    ) async throws {
        try await withService { service in
            let answer = try await service.call(method, params)
            expectEqual(error(answer).code, code)
            expectEqual(error(answer).message, message)
            expectEqual(error(answer).field, field)
        }
    }

    @Test func aRequestIDBeyondInt64IsAnInvalidRequest() async throws {
        try await withService { service in
            let request = Frame.encode(
                payload: Array(#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"bus.ping"}"#.utf8))
            let (messages, stillOpen) = try await service.exchange(request, reading: 1)
            expectEqual(messages.first?["id"], .null)
            expectEqual(error(messages.first ?? .null).code, -32600)
            expectEqual(error(messages.first ?? .null).message, "'id' must be an integer or a string")
            expectTrue(stillOpen)
        }
    }

    // MARK: - NUL

    @Test func aStringWithNULIsStoredWholeAndMatchedWhole() async throws {
        let service = try await CatalogueService.start()
        defer { service.stop() }
        let saved = try await service.call(
            "store.save", #"{"insert":[{"entity":"Device","values":{"address":"A\u0000B","name":"x\u0000"}}]}"#)
        let id = try #require(saved["result"]?["ids"]?["insert[0]"])
        let whole = try await service.call(
            "store.fetch", #"{"entity":"Device","where":"address == $a","args":{"a":"A\u0000B"}}"#)
        let objects = whole["result"]?["objects"]?.arrayValue ?? []
        expectEqual(objects.map { $0["id"] }, [id])
        expectEqual(objects.first?["values"]?["address"], .string("A\u{0}B"))
        expectEqual(objects.first?["values"]?["name"], .string("x\u{0}"))
        let prefix = try await service.call(
            "store.fetch", #"{"entity":"Device","where":"address == $a","args":{"a":"A"}}"#)
        expectEqual(prefix["result"]?["objects"], .array([]), "the NUL does not end the string")
    }

    @Test func aNULInsideAPredicateIsASyntaxErrorAtItsPosition() async throws {
        try await withService { service in
            let answer = try await service.call(
                "store.fetch", #"{"entity":"Device","where":"address == 'x'\u0000 OR TRUEPREDICATE"}"#)
            expectEqual(error(answer).code, -32602)
            expectEqual(
                error(answer).message,
                #"invalid params: where: predicate syntax error at 14: unexpected character '\0'"#)
            expectEqual(answer["error"]?["data"]?["position"], .int(14))
        }
    }

    @Test func aNULInAnEntityNameIsAnUnknownEntity() async throws {
        try await withService { service in
            let answer = try await service.call("store.fetch", #"{"entity":"Device\u0000"}"#)
            expectEqual(error(answer).code, -32602)
            expectEqual(error(answer).message, "invalid params: entity: unknown entity 'Device\u{0}'")
            expectEqual(error(answer).field, "entity")
        }
    }

    // MARK: - Predicates

    static let injections: [(String, String)] = [
        ("name == 'x'; DROP TABLE Reading", "predicate syntax error at 11: unexpected character ';'"),
        ("name == 'x' OR 1=1 --", "predicate syntax error at 19: found '-' after a complete predicate"),
        ("name == 'x'' OR ''1''=''1'", "predicate syntax error at 11: found a string after a complete predicate"),
        ("name == 'x' UNION SELECT * FROM sqlite_master", "predicate syntax error at 25: unexpected character '*'"),
        (
            "sqlite_master.name == 'x'",
            "predicate: 'sqlite_master.name': Device has no attribute or relationship 'sqlite_master'"
        ),
    ]

    @Test(arguments: injections)
    func aPredicateWithSQLAfterItIsRefusedAndRunsNothing(predicate: String, reason: String) async throws {
        try await withService { service in
            let answer = try await service.call("store.fetch", try fetch("Device", where: predicate))
            expectEqual(error(answer).code, -32602)
            expectEqual(error(answer).message, "invalid params: where: \(reason)")
            expectEqual(error(answer).field, "where")
        }
    }

    @Test func sqlInsideAStringLiteralOrArgumentIsJustData() async throws {
        try await withService { service in
            let sql = "x'); DROP TABLE Reading; --"
            let insert = JSONValue.object([
                "insert": .array([
                    .object([
                        "entity": .string("Device"),
                        "values": .object(["address": .string("EVIL"), "name": .string(sql)]),
                    ])
                ])
            ])
            #expect(try await service.call("store.save", try JSONWriter().string(insert))["result"] != nil)
            let literal = try await service.call("store.fetch", try fetch("Device", where: "name == \"\(sql)\""))
            expectEqual(literal["result"]?["count"], .int(1))
            let argument = try await service.call(
                "store.fetch", try fetch("Device", where: "name == $n", args: ["n": .string(sql)]))
            expectEqual(argument["result"]?["count"], .int(1))
            let delete = try await service.call("store.save", #"{"delete":[{"id":"Device/2"}]}"#)
            expectNotNil(delete["result"], "remove the extra device so the setup data compares equal")
        }
    }

    @Test func tenThousandOrClausesAnswerTheRightCount() async throws {
        try await withService { service in
            let clauses = (0..<10_000).map { "address == 'AA:BB:CC:DD:\($0)'" } + ["address == 'AA:BB:CC:DD:EE:01'"]
            let answer = try await service.call(
                "store.fetch", try fetch("Device", where: clauses.joined(separator: " OR ")))
            expectEqual(answer["result"]?["count"], .int(1), "\(answer)")
        }
    }

    @Test func tenThousandAndClausesAnswerTheRightCount() async throws {
        try await withService { service in
            let clauses = (0..<10_000).map { "characteristic != 'c\($0)'" }
            let answer = try await service.call(
                "store.fetch", try fetch("Reading", where: clauses.joined(separator: " AND ")))
            expectEqual(answer["result"]?["count"], .int(2), "\(answer)")
        }
    }

    @Test func tenThousandComparisonsThroughRelationshipsAreRefusedBeforeAnySQL() async throws {
        try await withService { service in
            let clauses = (0..<10_000).map { "ANY readings.chain == 'c\($0)'" }
            let answer = try await service.call(
                "store.fetch", try fetch("Device", where: clauses.joined(separator: " OR ")))
            expectEqual(error(answer).code, -32602)
            expectTrue(
                error(answer).message
                    == "invalid params: where: the predicate has 10000 comparisons through relationships; "
                    + "at most 256 are allowed")
            expectEqual(error(answer).field, "where")
            let subscribe = try await service.call(
                "store.subscribe",
                try JSONWriter().string(
                    .object(["entity": .string("Device"), "where": .string(clauses.joined(separator: " OR "))])))
            expectEqual(error(subscribe).code, -32602)
        }
    }

    @Test func tenThousandNestedParenthesesAreRefused() async throws {
        try await withService { service in
            let nested = String(repeating: "(", count: 10_000) + "TRUEPREDICATE" + String(repeating: ")", count: 10_000)
            let answer = try await service.call("store.fetch", try fetch("Device", where: nested))
            expectEqual(error(answer).code, -32602)
            expectEqual(
                error(answer).message,
                "invalid params: where: predicate syntax error at 21: the predicate nests deeper than 20 levels")
        }
    }

    // MARK: - IDs, unknown fields, wrong types

    static let otherEntityIDs: [(String, String, String)] = [
        (
            #"{"insert":[{"entity":"Reading","values":{"characteristic":"x","value":"AQ==","#
                + #""time":"2026-01-01T00:00:00.000Z","device":"Reading/1"}}]}"#,
            "invalid params: insert[0].values.device: device points at Device, not Reading", "insert[0].values.device"
        ),
        (
            #"{"update":[{"id":"Device/1","values":{"readings":["Device/1"]}}]}"#,
            "invalid params: update[0].values.readings[0]: readings points at Reading, not Device",
            "update[0].values.readings[0]"
        ),
        (
            #"{"update":[{"id":"Device/1","values":{"characteristic":"2a19"}}]}"#,
            "invalid params: update[0].values.characteristic: Device has no attribute or relationship 'characteristic'",
            "update[0].values.characteristic"
        ),
        (#"{"delete":[{"id":"Sensor/1"}]}"#, "invalid params: delete[0].id: unknown entity 'Sensor'", "delete[0].id"),
    ]

    @Test(arguments: otherEntityIDs)
    func anIDOfAnotherEntityIsRefusedNamingTheField(params: String, message: String, field: String) async throws {
        try await withService { service in
            let answer = try await service.call("store.save", params)
            expectEqual(error(answer).code, -32602)
            expectEqual(error(answer).message, message)
            expectEqual(error(answer).field, field)
        }
    }

    @Test func anIDOfAnotherEntityInAPredicateCanNeverMatchAndIsRefused() async throws {
        try await withService { service in
            let answer = try await service.call(
                "store.fetch", #"{"entity":"Reading","where":"device == $d","args":{"d":"Reading/1"}}"#)
            expectEqual(error(answer).code, -32602)
            expectEqual(
                error(answer).message,
                #"invalid params: where: predicate: 'device' is a relationship to Device and can never match "Reading/1""#
            )
        }
    }

    /// Unknown members of `params` are ignored (JSON-RPC's usual forward compatibility): a misspelled optional
    /// field changes nothing, and a save made only of unknown fields commits no transaction.
    @Test func unknownParamsFieldsAreIgnoredAndCommitNothing() async throws {
        try await withService { service in
            let save = try await service.call(
                "store.save", #"{"inserts":[{"entity":"Device","values":{"address":"ZZ"}}],"sudo":true}"#)
            expectEqual(save["result"]?["txn"], .int(1), "no new transaction: \(save)")
            expectEqual(save["result"]?["ids"], .object([:]))
            let fetch = try await service.call("store.fetch", #"{"entity":"Device","colour":"red","result":"count"}"#)
            expectEqual(fetch["result"]?["count"], .int(1))
            let hello = try await service.exchange(
                Frame.encode(
                    payload: Array(
                        #"{"jsonrpc":"2.0","id":1,"method":"bus.ping","params":{},"extra":{"a":[1,2]}}"#.utf8)),
                reading: 1)
            expectEqual(hello.messages.first?["result"], .object([:]))
        }
    }

    static let wrongTypes: [(String, String, String, String)] = [
        ("store.fetch", #"{"entity":"Device","limit":"10"}"#, "invalid params: limit: expected an integer", "limit"),
        ("store.get", #"{"ids":"Device/1"}"#, "invalid params: ids: expected an array", "ids"),
        ("store.save", #"{"insert":{"entity":"Device"}}"#, "invalid params: insert: expected an array", "insert"),
        (
            "store.save", #"{"insert":[{"entity":"Device","values":["a"]}]}"#,
            "invalid params: insert[0].values: expected an object", "insert[0].values"
        ),
        (
            "store.save", #"{"insert":[{"entity":"Device","values":{"address":"q"}}],"durability":"forever"}"#,
            "invalid params: durability: must be one of 'disk', 'memory'", "durability"
        ),
        (
            "store.save", #"{"insert":[{"entity":"Device","values":{"address":"q"}}],"mergePolicy":7}"#,
            "invalid params: mergePolicy: expected a string", "mergePolicy"
        ),
        (
            "store.save", #"{"insert":[{"entity":"Device","values":{"address":"q","connected":"yes"}}]}"#,
            "invalid params: insert[0].values.connected: expected true or false or null", "insert[0].values.connected"
        ),
        (
            "store.save", #"{"insert":[{"entity":"Device","values":{"address":12}}]}"#,
            "invalid params: insert[0].values.address: expected a string or null", "insert[0].values.address"
        ),
        (
            "store.save",
            #"{"insert":[{"entity":"Reading","values":{"characteristic":"x","value":"!!","time":"2026-01-01T00:00:00Z"}}]}"#,
            "invalid params: insert[0].values.value: expected a base64 string or null", "insert[0].values.value"
        ),
        (
            "store.save",
            #"{"insert":[{"entity":"Reading","values":{"characteristic":"x","value":"AQ==","time":"now"}}]}"#,
            "invalid params: insert[0].values.time: expected an RFC 3339 date-time string or null",
            "insert[0].values.time"
        ),
        ("store.fetch", #"{"entity":"Device","sort":"address"}"#, "invalid params: sort: expected an array", "sort"),
        (
            "store.fetch", #"{"entity":"Device","result":"everything"}"#,
            "invalid params: result: must be 'objects', 'ids' or 'count'", "result"
        ),
        ("store.fetch", #"{"entity":"Device","args":[1]}"#, "invalid params: args: expected an object", "args"),
        (
            "store.unsubscribe", #"{"subscription":"1"}"#, "invalid params: subscription: expected an integer",
            "subscription"
        ),
    ]

    @Test(arguments: wrongTypes)
    func aFieldOfTheWrongTypeIsRefusedNamingIt(
        method: String, params: String, message: String, field: String
    )
        async throws
    {
        try await withService { service in
            let answer = try await service.call(method, params)
            expectEqual(error(answer).code, -32602)
            expectEqual(error(answer).message, message)
            expectEqual(error(answer).field, field)
        }
    }

    /// The params of a `store.fetch` of `entity`'s count with `predicate` and `args`, as JSON text.
    func fetch(_ entity: String, where predicate: String, args: [String: JSONValue] = [:]) throws -> String {
        try JSONWriter().string(
            .object([
                "entity": .string(entity), "where": .string(predicate), "args": .object(args),
                "result": .string("count"),
            ]))
    }
}
