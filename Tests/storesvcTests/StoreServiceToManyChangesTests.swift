import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

/// `store.subscribe` with `"toMany":"changes"` (an addition to the design contract, in `docs/protocol.md`) against the real `storesvc` process.
struct StoreServiceToManyChangesTests {
    private static let reading = #"{"characteristic":"2a19","value":"AQ==","time":"2024-05-01T12:00:00Z""#

    /// Two devices and a reading of the first (txn 1); a second reading (txn 2); the second reading moved to the
    /// second device (txn 3); the first reading deleted (txn 4). Blocking: call it on a thread of its own.
    /// `afterEachSave` runs after each save is answered.
    private static func runReadingScenario(
        on service: StoreServiceProcess, afterEachSave: () throws -> Void = {}
    ) throws {
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        let saves = [
            #"{"insert":[{"entity":"Device","ref":"d1","values":{"address":"D1"}},"#
                + #"{"entity":"Device","ref":"d2","values":{"address":"D2"}},"#
                + #"{"entity":"Reading","ref":"r1","values":\#(reading),"device":"d1"}}]}"#,
            #"{"insert":[{"entity":"Reading","ref":"r2","values":\#(reading),"device":"Device/1"}}]}"#,
            #"{"update":[{"id":"Reading/2","values":{"device":"Device/2"}}]}"#,
            #"{"delete":[{"id":"Reading/1"}]}"#,
        ]
        for (index, save) in saves.enumerated() {
            let answer = try writer.call(index + 1, "store.save", save)
            guard answer["result"]?["txn"] == .int(Int64(index + 1)) else { throw ScenarioError(answer: answer) }
            try afterEachSave()
        }
    }

    private struct ScenarioError: Error, CustomStringConvertible {
        let answer: JSONValue
        var description: String { "a scenario save failed: \(answer)" }
    }

    /// Subscribes with `params` on a new connection, runs the scenario and reads the subscription's 4 events, each
    /// before the next save: whole arrays (the default mode) are read from the store at delivery, so an event
    /// delivered after a later commit would show that commit's members.
    private func scenarioEvents(_ params: String) async throws -> [JSONValue] {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        return try await onThread {
            let connection = try Self.subscriber(service, params)
            var events: [JSONValue] = []
            try Self.runReadingScenario(on: service) { events += try Self.changedEvents(1, from: connection) }
            return events
        }
    }

    /// Reads `count` `store.changed` events' params, with their `subscription` removed.
    private static func changedEvents(_ count: Int, from connection: RawBusConnection) throws -> [JSONValue] {
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

    /// A connection with one subscription made with `params`. Blocking.
    private static func subscriber(_ service: StoreServiceProcess, _ params: String) throws -> RawBusConnection {
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let answer = try connection.call(1, "store.subscribe", params)
        guard answer["result"]?["subscription"] != nil else { throw ScenarioError(answer: answer) }
        return connection
    }

    @Test func changesModeUpdatesCarryReadingsAddedAndRemovedNeverWholeArrays() async throws {
        let events = try await scenarioEvents(#"{"entity":"Device","toMany":"changes"}"#)
        expectEqual(events.map { $0["txn"] }, [.int(1), .int(2), .int(3), .int(4)])
        // Inserted devices: all values, their (small) whole sets included.
        expectEqual(
            events[0]["inserted"],
            json(
                #"[{"id":"Device/1","version":1,"values":{"address":"D1","name":null,"connected":false,"#
                    + #""lastSeen":null,"readings":["Reading/1"]}},{"id":"Device/2","version":1,"values":{"#
                    + #""address":"D2","name":null,"connected":false,"lastSeen":null,"readings":[]}}]"#))
        expectEqual(
            updated(events[1])["Device/1"],
            json(
                #"{"id":"Device/1","version":2,"values":{},"#
                    + #""toManyChanges":{"readings":{"added":["Reading/2"],"removed":[]}}}"#))
        expectEqual(
            updated(events[2])["Device/1"]?["toManyChanges"],
            json(#"{"readings":{"added":[],"removed":["Reading/2"]}}"#))
        expectEqual(
            updated(events[2])["Device/2"]?["toManyChanges"],
            json(#"{"readings":{"added":["Reading/2"],"removed":[]}}"#))
        expectEqual(
            updated(events[3])["Device/1"]?["toManyChanges"],
            json(#"{"readings":{"added":[],"removed":["Reading/1"]}}"#))
        for event in events {
            for entry in updated(event).values { expectNil(entry["values"]?["readings"]) }
        }
    }

    @Test func theDefaultModeStillSendsWholeArrays() async throws {
        let events = try await scenarioEvents(#"{"entity":"Device"}"#)
        expectEqual(events.map { $0["txn"] }, [.int(1), .int(2), .int(3), .int(4)])
        expectEqual(
            updated(events[1])["Device/1"],
            json(#"{"id":"Device/1","version":2,"values":{"readings":["Reading/1","Reading/2"]}}"#))
        expectEqual(updated(events[2])["Device/1"]?["values"], json(#"{"readings":["Reading/1"]}"#))
        expectEqual(updated(events[2])["Device/2"]?["values"], json(#"{"readings":["Reading/2"]}"#))
        expectEqual(updated(events[3])["Device/1"]?["values"], json(#"{"readings":[]}"#))
        for event in events {
            for entry in updated(event).values { expectNil(entry["toManyChanges"]) }
        }
    }

    @Test func aReplayWithSinceGivesTheSameEventsAsLiveDeliveryInChangesMode() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let (liveEvents, replayedEvents) = try await onThread {
            let live = try Self.subscriber(service, #"{"toMany":"changes"}"#)
            try Self.runReadingScenario(on: service)
            let liveEvents = try Self.changedEvents(4, from: live)
            let replayed = try Self.subscriber(service, #"{"since":0,"toMany":"changes"}"#)
            return (liveEvents, try Self.changedEvents(4, from: replayed))
        }
        expectEqual(liveEvents.count, 4)
        expectEqual(replayedEvents, liveEvents)
    }

    @Test func anInvalidToManyModeIsInvalidParams() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let values = [#""arrays""#, "5", "true", #"["changes"]"#, #""Changes""#]
        let (answers, stats) = try await onThread {
            let connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            let answers = try values.enumerated().map { (id, value) in
                try connection.call(id + 1, "store.subscribe", #"{"entity":"Device","toMany":\#(value)}"#)
            }
            return (answers, try connection.call(10, "store.stats"))
        }
        for (value, answer) in zip(values, answers) {
            expectEqual(answer["error"]?["code"], .int(-32602), "toMany \(value): \(answer)")
            expectEqual(answer["error"]?["data"]?["field"], .string("toMany"), "toMany \(value): \(answer)")
        }
        expectEqual(
            answers.first?["error"]?["message"], .string("invalid params: toMany: must be one of 'values', 'changes'"))
        expectEqual(stats["result"]?["subscriptions"], .int(0))
    }

    @Test func aReadingSavedForADeviceWithTenThousandReadingsMakesASmallChangesEvent() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let count = 10_000
        let (small, large) = try await onThread { () throws -> ((JSONValue, Int)?, (JSONValue, Int)?) in
            let writer = try RawBusConnection(path: service.socketPath, receiveTimeoutSeconds: 120)
            try writer.hello()
            var save = #"{"durability":"memory","insert":[{"entity":"Device","ref":"d","values":{"address":"D"}}"#
            for i in 0..<count {
                save += #",{"entity":"Reading","ref":"r\#(i)","values":\#(Self.reading),"device":"d"}}"#
            }
            save += "]}"
            let bulk = try writer.call(1, "store.save", save)
            guard bulk["result"]?["txn"] == .int(1) else { throw ScenarioError(answer: bulk) }
            let changes = try Self.subscriber(service, #"{"entity":"Device","toMany":"changes"}"#)
            let values = try Self.subscriber(service, #"{"entity":"Device"}"#)
            let one = #"{"insert":[{"entity":"Reading","ref":"r","values":\#(Self.reading),"device":"Device/1"}}]}"#
            let answer = try writer.call(2, "store.save", one)
            guard answer["result"]?["txn"] == .int(2) else { throw ScenarioError(answer: answer) }
            return (try changes.readSizedMessage(), try values.readSizedMessage())
        }
        let (event, length) = try #require(small)
        expectEqual(event["method"], .string("store.changed"))
        expectEqual(
            updated(event["params"] ?? .null)["Device/1"]?["toManyChanges"],
            json(#"{"readings":{"added":["Reading/10001"],"removed":[]}}"#))
        // The event does not grow with the set: a few hundred bytes, where the whole array is over 10,001 IDs.
        expectLessThan(length, 512)
        expectTrue(try #require(large).1 > count * "\"Reading/1\",".utf8.count)
    }
}
