import BusProtocol
import Foundation
import Shared
import Testing

/// `store.subscribe` with `"toMany":"changes"` (an addition to `PROTOCOL.md`) against the real `storesvc` process.
@Suite struct StoreServiceToManyChangesTests {
    private static let reading = #"{"characteristic":"2a19","value":"AQ==","time":"2024-05-01T12:00:00Z""#

    /// Two devices and a reading of the first (txn 1); a second reading (txn 2); the second reading moved to the
    /// second device (txn 3); the first reading deleted (txn 4). Returns the writer.
    private func runReadingScenario(on service: StoreServiceProcess) throws -> RawBusConnection {
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        let first = try writer.call(
            1, "store.save",
            #"{"insert":[{"entity":"Device","ref":"d1","values":{"address":"D1"}},"#
                + #"{"entity":"Device","ref":"d2","values":{"address":"D2"}},"#
                + #"{"entity":"Reading","ref":"r1","values":\#(Self.reading),"device":"d1"}}]}"#)
        #expect(first["result"]?["ids"] == json(#"{"d1":"Device/1","d2":"Device/2","r1":"Reading/1"}"#))
        let second = try writer.call(
            2, "store.save",
            #"{"insert":[{"entity":"Reading","ref":"r2","values":\#(Self.reading),"device":"Device/1"}}]}"#)
        #expect(second["result"]?["ids"] == json(#"{"r2":"Reading/2"}"#))
        let move = try writer.call(
            3, "store.save", #"{"update":[{"id":"Reading/2","values":{"device":"Device/2"}}]}"#)
        #expect(move["result"]?["txn"] == .int(3))
        let delete = try writer.call(4, "store.save", #"{"delete":[{"id":"Reading/1"}]}"#)
        #expect(delete["result"]?["txn"] == .int(4))
        return writer
    }

    /// Reads `count` `store.changed` events' params, with their `subscription` removed.
    private func changedEvents(_ count: Int, from connection: RawBusConnection) throws -> [JSONValue] {
        var events: [JSONValue] = []
        while events.count < count, let message = try connection.readMessage() {
            guard message["method"] == .string("store.changed"), case .object(var params)? = message["params"] else {
                continue
            }
            params["subscription"] = nil
            events.append(.object(params))
        }
        return events
    }

    /// The `updated` entries of an event, by ID.
    private func updated(_ event: JSONValue) -> [String: JSONValue] {
        guard case .array(let entries)? = event["updated"] else { return [:] }
        var byID: [String: JSONValue] = [:]
        for entry in entries { if case .string(let id)? = entry["id"] { byID[id] = entry } }
        return byID
    }

    private func subscriber(_ service: StoreServiceProcess, _ params: String) throws -> RawBusConnection {
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let answer = try connection.call(1, "store.subscribe", params)
        #expect(answer["result"]?["subscription"] != nil, "\(answer)")
        return connection
    }

    @Test func changesModeUpdatesCarryReadingsAddedAndRemovedNeverWholeArrays() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let devices = try subscriber(service, #"{"entity":"Device","toMany":"changes"}"#)
        _ = try runReadingScenario(on: service)
        let events = try changedEvents(4, from: devices)
        #expect(events.map { $0["txn"] } == [.int(1), .int(2), .int(3), .int(4)])
        // Inserted devices: all values, their (small) whole sets included.
        #expect(
            events[0]["inserted"]
                == json(
                    #"[{"id":"Device/1","version":1,"values":{"address":"D1","name":null,"connected":false,"#
                        + #""lastSeen":null,"readings":["Reading/1"]}},{"id":"Device/2","version":1,"values":{"#
                        + #""address":"D2","name":null,"connected":false,"lastSeen":null,"readings":[]}}]"#))
        #expect(
            updated(events[1])["Device/1"]
                == json(
                    #"{"id":"Device/1","version":2,"values":{},"#
                        + #""toManyChanges":{"readings":{"added":["Reading/2"],"removed":[]}}}"#))
        #expect(
            updated(events[2])["Device/1"]?["toManyChanges"]
                == json(#"{"readings":{"added":[],"removed":["Reading/2"]}}"#))
        #expect(
            updated(events[2])["Device/2"]?["toManyChanges"]
                == json(#"{"readings":{"added":["Reading/2"],"removed":[]}}"#))
        #expect(
            updated(events[3])["Device/1"]?["toManyChanges"]
                == json(#"{"readings":{"added":[],"removed":["Reading/1"]}}"#))
        for event in events {
            for entry in updated(event).values { #expect(entry["values"]?["readings"] == nil) }
        }
    }

    @Test func theDefaultModeStillSendsWholeArrays() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let devices = try subscriber(service, #"{"entity":"Device"}"#)
        _ = try runReadingScenario(on: service)
        let events = try changedEvents(4, from: devices)
        #expect(events.map { $0["txn"] } == [.int(1), .int(2), .int(3), .int(4)])
        #expect(
            updated(events[1])["Device/1"]
                == json(#"{"id":"Device/1","version":2,"values":{"readings":["Reading/1","Reading/2"]}}"#))
        #expect(updated(events[2])["Device/1"]?["values"] == json(#"{"readings":["Reading/1"]}"#))
        #expect(updated(events[2])["Device/2"]?["values"] == json(#"{"readings":["Reading/2"]}"#))
        #expect(updated(events[3])["Device/1"]?["values"] == json(#"{"readings":[]}"#))
        for event in events {
            for entry in updated(event).values { #expect(entry["toManyChanges"] == nil) }
        }
    }

    @Test func aReplayWithSinceGivesTheSameEventsAsLiveDeliveryInChangesMode() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let live = try subscriber(service, #"{"toMany":"changes"}"#)
        _ = try runReadingScenario(on: service)
        let liveEvents = try changedEvents(4, from: live)
        let replayed = try subscriber(service, #"{"since":0,"toMany":"changes"}"#)
        let replayedEvents = try changedEvents(4, from: replayed)
        #expect(liveEvents.count == 4)
        #expect(replayedEvents == liveEvents)
    }

    @Test func anInvalidToManyModeIsInvalidParams() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        for (id, value) in [#""arrays""#, "5", "true", #"["changes"]"#, #""Changes""#].enumerated() {
            let answer = try connection.call(id + 1, "store.subscribe", #"{"entity":"Device","toMany":\#(value)}"#)
            #expect(answer["error"]?["code"] == .int(-32602), "toMany \(value): \(answer)")
            #expect(answer["error"]?["data"]?["field"] == .string("toMany"), "toMany \(value): \(answer)")
        }
        let answer = try connection.call(9, "store.subscribe", #"{"toMany":"arrays"}"#)
        #expect(answer["error"]?["message"] == .string("invalid params: toMany: must be one of 'values', 'changes'"))
        let stats = try connection.call(10, "store.stats")
        #expect(stats["result"]?["subscriptions"] == .int(0))
    }

    @Test func aReadingSavedForADeviceWithTenThousandReadingsMakesASmallChangesEvent() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let writer = try RawBusConnection(path: service.socketPath, receiveTimeoutSeconds: 120)
        try writer.hello()
        let count = 10_000
        var save = #"{"durability":"memory","insert":[{"entity":"Device","ref":"d","values":{"address":"D"}}"#
        for i in 0..<count { save += #",{"entity":"Reading","ref":"r\#(i)","values":\#(Self.reading),"device":"d"}}"# }
        save += "]}"
        #expect(try writer.call(1, "store.save", save)["result"]?["txn"] == .int(1))
        let changes = try subscriber(service, #"{"entity":"Device","toMany":"changes"}"#)
        let values = try subscriber(service, #"{"entity":"Device"}"#)
        let one = #"{"insert":[{"entity":"Reading","ref":"r","values":\#(Self.reading),"device":"Device/1"}}]}"#
        #expect(try writer.call(2, "store.save", one)["result"]?["txn"] == .int(2))
        let small = try #require(try changes.readSizedMessage())
        let large = try #require(try values.readSizedMessage())
        #expect(small.message["method"] == .string("store.changed"))
        #expect(
            updated(small.message["params"] ?? .null)["Device/1"]?["toManyChanges"]
                == json(#"{"readings":{"added":["Reading/10001"],"removed":[]}}"#))
        // The event does not grow with the set: a few hundred bytes, where the whole array is over 10,001 IDs.
        #expect(small.length < 512)
        #expect(large.length > count * "\"Reading/1\",".utf8.count)
    }
}
