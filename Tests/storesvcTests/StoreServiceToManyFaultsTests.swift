import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

/// `store.fetch` and `store.get` with `"toMany":"faults"` (an addition to the design contract, in `docs/protocol.md`) against the real `storesvc`
/// process.
struct StoreServiceToManyFaultsTests {
    private static let reading = #"{"characteristic":"2a19","value":"AQ==","time":"2024-05-01T12:00:00Z""#

    private struct ScenarioError: Error, CustomStringConvertible {
        let answer: JSONValue
        var description: String { "a request failed: \(answer)" }
    }

    /// A connection that has saved `Device/1` (address D1) with `count` readings and `Device/2` with none, in one
    /// transaction. Blocking.
    private static func connectionWithDevice(
        _ service: StoreServiceProcess, readings count: Int, timeout: Int = 30
    ) throws -> RawBusConnection {
        let connection = try RawBusConnection(path: service.socketPath, receiveTimeoutSeconds: timeout)
        try connection.hello()
        var save = #"{"durability":"memory","insert":[{"entity":"Device","ref":"d1","values":{"address":"D1"}},"#
        save += #"{"entity":"Device","ref":"d2","values":{"address":"D2"}}"#
        for i in 0..<count {
            save += #",{"entity":"Reading","ref":"r\#(i)","values":\#(reading),"device":"d1"}}"#
        }
        save += "]}"
        let answer = try connection.call(1, "store.save", save)
        guard answer["result"]?["txn"] == .int(1) else { throw ScenarioError(answer: answer) }
        return connection
    }

    /// The `values` of each object of a `store.fetch` or `store.get` answer, by ID.
    private func values(_ answer: JSONValue) -> [String: JSONValue] {
        guard case .array(let objects)? = answer["result"]?["objects"] else { return [:] }
        var byID: [String: JSONValue] = [:]
        for object in objects { if case .string(let id)? = object["id"] { byID[id] = object["values"] ?? .null } }
        return byID
    }

    @Test func faultsLeaveToManyKeysOutOfFetchAndGetAndTheDefaultStillSendsWholeArrays() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let answers = try await onThread { () throws -> [JSONValue] in
            let connection = try Self.connectionWithDevice(service, readings: 2)
            return try [
                connection.call(2, "store.fetch", #"{"entity":"Device","toMany":"faults"}"#),
                connection.call(3, "store.fetch", #"{"entity":"Device"}"#),
                connection.call(4, "store.get", #"{"ids":["Device/1","Reading/1","Device/9"],"toMany":"faults"}"#),
                connection.call(5, "store.get", #"{"ids":["Device/1"]}"#),
                connection.call(6, "store.fetch", #"{"entity":"Reading","result":"ids","toMany":"faults"}"#),
                connection.call(7, "store.fetch", #"{"entity":"Device","toMany":"values"}"#),
            ]
        }
        let faultedFetch = values(answers[0])
        expectNil(faultedFetch["Device/1"]?["readings"])
        expectEqual(faultedFetch["Device/1"]?["address"], .string("D1"))
        expectNil(faultedFetch["Device/2"]?["readings"])
        expectEqual(faultedFetch.count, 2)
        expectEqual(values(answers[1])["Device/1"]?["readings"], json(#"["Reading/1","Reading/2"]"#))
        expectEqual(values(answers[1])["Device/2"]?["readings"], json("[]"))

        let faultedGet = values(answers[2])
        expectNil(faultedGet["Device/1"]?["readings"])
        expectEqual(faultedGet["Device/1"]?["address"], .string("D1"))
        expectEqual(answers[2]["result"]?["missing"], json(#"["Device/9"]"#))
        // To-one relationships are kept: only to-many keys are left out.
        expectEqual(faultedGet["Reading/1"]?["device"], .string("Device/1"))
        expectEqual(faultedGet["Reading/1"]?["characteristic"], .string("2a19"))
        expectEqual(values(answers[3])["Device/1"]?["readings"], json(#"["Reading/1","Reading/2"]"#))
        expectEqual(answers[4]["result"]?["ids"], json(#"["Reading/1","Reading/2"]"#))
        expectEqual(answers[5]["result"], answers[1]["result"])
    }

    @Test func anInvalidToManyModeIsInvalidParamsAndTheServiceStaysUp() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let values = [#""changes""#, #""Faults""#, "5", "true", #"["faults"]"#]
        let (answers, after) = try await onThread { () throws -> ([JSONValue], JSONValue) in
            let connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            var answers: [JSONValue] = []
            for (index, value) in values.enumerated() {
                answers.append(
                    try connection.call(2 * index + 1, "store.fetch", #"{"entity":"Device","toMany":\#(value)}"#))
                answers.append(try connection.call(2 * index + 2, "store.get", #"{"ids":[],"toMany":\#(value)}"#))
            }
            return (answers, try connection.call(99, "store.fetch", #"{"entity":"Device","toMany":"faults"}"#))
        }
        expectEqual(answers.count, 2 * values.count)
        for answer in answers {
            expectEqual(answer["error"]?["code"], .int(-32602), "\(answer)")
            expectEqual(answer["error"]?["data"]?["field"], .string("toMany"), "\(answer)")
        }
        expectEqual(
            answers.first?["error"]?["message"], .string("invalid params: toMany: must be one of 'values', 'faults'"))
        expectEqual(after["result"]?["objects"], json("[]"))
    }

    @Test func aFaultedFetchOfADeviceWithTenThousandReadingsStaysSmall() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let count = 10_000
        let (faulted, whole) = try await onThread { () throws -> ((JSONValue, Int)?, (JSONValue, Int)?) in
            let connection = try Self.connectionWithDevice(service, readings: count, timeout: 120)
            let request = #"{"entity":"Device","where":"address == $a","args":{"a":"D1"},"limit":1"#
            try connection.writeFrame(
                #"{"jsonrpc":"2.0","id":2,"method":"store.fetch","params":\#(request),"toMany":"faults"}}"#)
            let faulted = try connection.readSizedMessage()
            try connection.writeFrame(#"{"jsonrpc":"2.0","id":3,"method":"store.fetch","params":\#(request)}}"#)
            return (faulted, try connection.readSizedMessage())
        }
        let (answer, length) = try #require(faulted)
        expectEqual(values(answer)["Device/1"]?["address"], .string("D1"))
        expectNil(values(answer)["Device/1"]?["readings"])
        // The answer does not grow with the set: a couple of hundred bytes, where the whole array is 10,000 IDs.
        expectLessThan(length, 512)
        expectTrue(try #require(whole).1 > count * "\"Reading/1\",".utf8.count)
    }
}
