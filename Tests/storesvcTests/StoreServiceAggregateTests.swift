import Foundation
import TestSupport
import Testing

@testable import ContextBusClient

/// `store.aggregate` against the real storesvc (docs/protocol.md, "store.aggregate").
struct StoreServiceAggregateTests {
    private func seed(_ connection: RawBusConnection) throws {
        let readings = [("10:10", "AQ=="), ("10:50", "Ag=="), ("11:20", "BA==")].map { time, value in
            #"{"entity":"Reading","values":{"characteristic":"2a19","value":"\#(value)","time":"2024-05-01T\#(time):00.000Z","device":"d"}}"#
        }
        let answer = try connection.call(
            1, "store.save",
            #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:01"}},\#(readings.joined(separator: ","))]}"#
        )
        precondition(answer["result"] != nil, "seed failed: \(answer)")
    }

    @Test func groupsComeByDeviceAndHourWithIDsAndDatesOnTheWire() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        try seed(connection)
        let answer = try connection.call(
            2, "store.aggregate",
            #"{"entity":"Reading","groupBy":["device"],"bucket":{"key":"time","seconds":3600},"values":{"n":"count","last":"max:time"}}"#
        )
        let groups = try #require(answer["result"]?["groups"]?.arrayValue)
        expectEqual(groups.count, 2)
        expectEqual(
            groups[0]["key"], .object(["device": .string("Device/1"), "time": .string("2024-05-01T10:00:00.000Z")]))
        expectEqual(groups[0]["values"], .object(["n": .int(2), "last": .string("2024-05-01T10:50:00.000Z")]))
        expectEqual(groups[1]["values"]?["n"], .int(1))
    }

    /// `sum` and `avg` over a date (PROTOCOL.md, "Aggregates"): the sum a date (past year 9999 here: it reads back),
    /// the mean a double of seconds since the Unix epoch.
    @Test func aDatesSumIsADateAndItsAverageADoubleOnTheWire() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        try seed(connection)
        let answer = try connection.call(
            2, "store.aggregate", #"{"entity":"Reading","values":{"total":"sum:time","mean":"avg:time"}}"#)
        let values = try #require(answer["result"]?["groups"]?.arrayValue?.first?["values"], "\(answer)")
        // 10:10, 10:50 and 11:20 on 2024-05-01 (1,714,557,600 is 10:00).
        let seconds = [600.0, 3000, 4800].map { 1_714_557_600 + $0 }
        expectEqual(values["mean"], .double(seconds.reduce(0, +) / 3))
        let total = try #require(values["total"]?.stringValue)
        expectEqual(Date(rfc3339: total)?.timeIntervalSince1970, seconds.reduce(0, +))
    }

    @Test(arguments: [
        (#"{"entity":"Reading","groupBy":["colour"],"values":{"n":"count"}}"#, "groupBy[0]"),
        (#"{"entity":"Reading","values":{"n":"median:time"}}"#, "values.n"),
        (#"{"entity":"Reading","values":{"n":"avg:characteristic"}}"#, "values.n"),
        (#"{"entity":"Reading","bucket":{"key":"time","seconds":0},"values":{"n":"count"}}"#, "bucket.seconds"),
        (#"{"entity":"Reading","bucket":{"key":"characteristic","seconds":60},"values":{"n":"count"}}"#, "bucket.key"),
        (#"{"entity":"Gadget","values":{"n":"count"}}"#, "entity"),
        (#"{"entity":"Reading"}"#, "values"),
    ])
    func aMalformedAggregateIsInvalidParamsNamingTheField(params: String, field: String) throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let answer = try connection.call(1, "store.aggregate", params)
        expectEqual(answer["error"]?["code"], .int(-32602))
        expectEqual(answer["error"]?["data"]?["field"], .string(field))
        expectEqual(try connection.call(2, "bus.ping")["result"], .object([:]))
    }

    @Test func aRemoteStoreAnswersWithTheTypesOfTheRequestsKeys() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        try seed(connection)
        let store = try await service.remoteStore()
        defer { store.close() }
        let request = AggregateRequest(
            entity: "Reading", groupBy: ["device"], bucket: .init(key: "time", seconds: 3600),
            values: ["n": .count, "first": .minimum("time"), "total": .sum("time"), "mean": .average("time")])
        let result = try await onThread { try store.aggregate(request) }
        let device = ObjectID(entity: "Device", number: 1)
        let ten = Date(timeIntervalSince1970: 1_714_557_600)  // 2024-05-01T10:00:00Z
        expectEqual(
            result.groups.first,
            AggregateResult.Group(
                key: ["device": .reference(device), "time": .date(ten)],
                values: [
                    "n": .int(2), "first": .date(ten.addingTimeInterval(600)),
                    "total": .date(Date(timeIntervalSince1970: 2 * ten.timeIntervalSince1970 + 600 + 3000)),
                    "mean": .double(ten.timeIntervalSince1970 + 1800),
                ]))
    }
}
