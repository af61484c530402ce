import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient

/// `store.batch` against the real storesvc (docs/protocol.md, "store.batch").
struct StoreServiceBatchTests {
    /// Inserts `count` readings of one device in one save.
    private func seed(_ connection: RawBusConnection, readings count: Int, id: Int = 1) throws {
        let readings = (0..<count).map { n in
            #"{"entity":"Reading","values":{"characteristic":"2a19","value":"AQ==","time":"2024-01-01T00:00:\#(String(format: "%02d", n % 60)).000Z","device":"d"}}"#
        }
        let params =
            #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:\#(id)"}},\#(readings.joined(separator: ","))]}"#
        let answer = try connection.call(id, "store.save", params)
        precondition(answer["result"] != nil, "seed failed: \(answer)")
    }

    @Test func aBatchAnswersTxnAndCountAndSubscribersSeeEveryObject() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        try seed(connection, readings: 6)
        let watcher = try RawBusConnection(path: service.socketPath)
        try watcher.hello()
        _ = try watcher.call(1, "store.subscribe", #"{"entity":"Reading"}"#)
        let answer = try connection.call(
            2, "store.batch",
            #"{"entity":"Reading","where":"time < $cutoff","args":{"cutoff":"2024-01-01T00:00:03.000Z"},"set":{"chain":"old"},"author":"sweeper"}"#
        )
        expectEqual(answer["result"]?["count"], .int(3))
        expectEqual(answer["result"]?["txn"], .int(2))
        let event = try #require(try watcher.readMessage())
        expectEqual(event["params"]?["txn"], .int(2))
        expectEqual(event["params"]?["author"], .string("sweeper"))
        expectEqual(event["params"]?["updated"]?.arrayValue?.count, 3)
        let deleted = try connection.call(
            3, "store.batch", #"{"entity":"Reading","where":"chain == 'old'","delete":true}"#)
        expectEqual(deleted["result"]?["count"], .int(3))
        let gone = try #require(try watcher.readMessage())
        expectEqual(gone["params"]?["deleted"]?.arrayValue?.count, 3)
        let none = try connection.call(
            4, "store.batch", #"{"entity":"Reading","where":"chain == 'old'","delete":true}"#)
        expectEqual(none["result"], .object(["txn": .null, "count": .int(0)]))
    }

    @Test(arguments: [
        (#"{"entity":"Reading","set":{"chain":"x"},"delete":true}"#, "set"),
        (#"{"entity":"Reading"}"#, "set"),
        (#"{"entity":"Gadget","delete":true}"#, "entity"),
        (#"{"entity":"Reading","where":"chain ==","delete":true}"#, "where"),
        (#"{"entity":"Reading","set":{"colour":"red"}}"#, "set.colour"),
        (#"{"entity":"Reading","set":{"time":"yesterday"}}"#, "set.time"),
        (#"{"entity":"Reading","where":"nothing == 1","delete":true}"#, "where"),
    ])
    func aMalformedBatchIsInvalidParamsAndChangesNothing(params: String, field: String) throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        try seed(connection, readings: 2)
        let answer = try connection.call(2, "store.batch", params)
        expectEqual(answer["error"]?["code"], .int(-32602))
        expectEqual(answer["error"]?["data"]?["field"], .string(field))
        let count = try connection.call(3, "store.fetch", #"{"entity":"Reading","result":"count"}"#)
        expectEqual(count["result"]?["count"], .int(2))
    }

    @Test func aBatchInterruptedByKillDashNineIsAllOrNothing() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        // A long guard: under the address sanitizer, with the other suites running, 20,000 inserts take a while.
        let connection = try RawBusConnection(path: service.socketPath, receiveTimeoutSeconds: 180)
        try connection.hello()
        for part in 0..<10 { try seed(connection, readings: 2_000, id: 100 + part) }
        // Send the batch and kill the service while it may be running it: after the restart either every reading
        // is there or none is.
        try connection.write(
            Frame.encode(
                payload: Array(
                    #"{"jsonrpc":"2.0","id":9,"method":"store.batch","params":{"entity":"Reading","delete":true}}"#.utf8
                )
            ))
        usleep(30_000)
        service.signal(SIGKILL)
        expectEqual(service.waitForExit(), 128 + SIGKILL)
        let restarted = try StoreServiceProcess(directory: service.directory)
        defer { restarted.destroy() }
        let probe = try RawBusConnection(path: restarted.socketPath, receiveTimeoutSeconds: 180)
        try probe.hello()
        let count = try probe.call(1, "store.fetch", #"{"entity":"Reading","result":"count"}"#)
        let remaining = try #require(count["result"]?["count"]?.intValue)
        expectTrue(remaining == 0 || remaining == 20_000, "a batch was half applied: \(remaining) readings left")
        let integrity = try probe.call(2, "store.fetch", #"{"entity":"Device","result":"count"}"#)
        expectEqual(integrity["result"]?["count"], .int(10))
    }
}
