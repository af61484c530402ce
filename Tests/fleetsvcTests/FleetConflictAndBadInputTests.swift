import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import fleetsvc

/// Conflicting writes while a gateway is partitioned, and hostile input on the fleet's subjects.
@Suite(.serialized, .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"))
struct FleetConflictAndBadInputTests {
    /// While b's bridge is down, a and b write the same keys: the later commit wins everywhere, a delete beats a
    /// concurrent update, and nothing is published twice.
    @Test func concurrentWritesWhilePartitionedConvergeOnTheSameWinner() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let a = try await TestGateway.start("a", nats: nats)
        defer { a.stop() }
        let b = try await TestGateway.start("b", nats: nats)
        defer { b.stop() }
        try await a.save(
            .object([
                "insert": .array([
                    deviceInsert("AA:00:00:00:00:01", name: "one"),
                    readingInsert("r1", device: .object(["ref": .string("d")])),
                    readingInsert("r2", device: .object(["ref": .string("d")])),
                ])
            ]))
        try await waitForConvergence([a, b])
        await b.killFleet()
        func update(_ gateway: TestGateway, _ id: String, _ values: [String: JSONValue]) async throws {
            try await gateway.save(
                .object(["update": .array([.object(["id": .string(id), "values": .object(values)])])]))
        }
        let deviceA = try #require(try await a.device("AA:00:00:00:00:01"))
        let deviceB = try #require(try await b.device("AA:00:00:00:00:01"))
        try await update(a, deviceA, ["name": .string("fromA")])
        try await a.save(
            .object(["delete": .array([.object(["id": .string(try #require(try await a.reading("r1")))])])]))
        try await update(a, try #require(try await a.reading("r2")), ["chain": .string("a")])
        try await Task.sleep(for: .milliseconds(5))
        try await update(b, deviceB, ["name": .string("fromB")])
        try await update(b, try #require(try await b.reading("r1")), ["chain": .string("b")])
        try await update(b, try #require(try await b.reading("r2")), ["chain": .string("b")])
        try await b.startFleet()
        let contents = try await waitForConvergence([a, b])
        expectTrue(contents.contains("name=\"fromB\""))
        expectTrue(!contents.contains("Reading \"r1\""))
        expectTrue(contents.contains("Reading \"r2\" value=\"Wg==\" chain=\"b\""))
        // No echo: a published its 4 transactions, b its 3.
        expectEqual(try await a.status().objectValue?["publications"]?.intValue, 4)
        expectEqual(try await b.status().objectValue?["publications"]?.intValue, 3)
    }

    /// While b's bridge is down, a deletes a device (its readings go with it: the default model's cascade) and b
    /// records a new reading of that device. Every gateway ends without the device and without the reading,
    /// whichever order it got the two transactions in (c gets a's first, a gets b's after its own delete, b gets
    /// a's after its own insert).
    @Test func aDeviceDeletedWhileAnotherGatewayRecordsAReadingOfItEndsTheSameEverywhere() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let a = try await TestGateway.start("a", nats: nats)
        defer { a.stop() }
        let b = try await TestGateway.start("b", nats: nats)
        defer { b.stop() }
        let c = try await TestGateway.start("c", nats: nats)
        defer { c.stop() }
        try await a.save(
            .object([
                "insert": .array([
                    deviceInsert("AA:00:00:00:00:01", name: "one"),
                    readingInsert("r1", device: .object(["ref": .string("d")])),
                    deviceInsert("AA:00:00:00:00:02", name: "two", ref: "e"),
                ])
            ]))
        try await waitForConvergence([a, b, c])
        await b.killFleet()
        let deviceA = try #require(try await a.device("AA:00:00:00:00:01"))
        try await a.save(.object(["delete": .array([.object(["id": .string(deviceA)])])]))
        let deviceB = try #require(try await b.device("AA:00:00:00:00:01"))
        try await b.save(.object(["insert": .array([readingInsert("late", device: .string(deviceB))])]))
        // A reading b moves to the deleted device goes too.
        let other = try #require(try await b.device("AA:00:00:00:00:02"))
        try await b.save(.object(["insert": .array([readingInsert("moved", device: .string(other))])]))
        let moved = try #require(try await b.reading("moved"))
        try await b.save(
            .object([
                "update": .array([.object(["id": .string(moved), "values": .object(["device": .string(deviceB)])])])
            ]))
        try await b.startFleet()
        let contents = try await waitForConvergence([a, b, c])
        expectEqual(contents, "Device AA:00:00:00:00:02 name=\"two\" connected=false")
    }

    /// A malformed message, a message whose gateway and subject disagree, and one for an entity and a key this
    /// model does not have: each is logged and counted, the store is not touched wrongly, the bridge goes on.
    @Test func badMessagesAreRefusedOrTrimmedAndTheBridgeGoesOn() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let a = try await TestGateway.start("a", nats: nats)
        defer { a.stop() }
        // Waits for a's bridge to make the stream.
        try await waitForConvergence([a])
        let peer = try JetStream(settings: .init(url: nats.url, name: "fleetsvc-tests"))
        defer { peer.close() }
        let stream = "CTXBUS_DEFAULT"
        _ = try peer.publish(
            subject: "ctxbus.default.x.txn", data: Array("{not json".utf8), messageID: "m1", stream: stream)
        let foreign = FleetMessage(
            gateway: "y", txn: 1, previous: 0, clock: 1, author: nil,
            inserted: [.init(id: "y:Device/1", entity: "Device", values: ["address": .string("EVIL")])], updated: [],
            deleted: [])
        _ = try peer.publish(subject: "ctxbus.default.x.txn", data: foreign.bytes, messageID: "m2", stream: stream)
        let newer = FleetMessage(
            gateway: "z", txn: 1, previous: 0, clock: 1, author: nil,
            inserted: [
                .init(id: "z:Gadget/1", entity: "Gadget", values: ["size": .int(3)]),
                .init(
                    id: "z:Device/1", entity: "Device",
                    values: ["address": .string("AA:00:00:00:00:09"), "colour": .string("red")]),
            ], updated: [], deleted: [])
        _ = try peer.publish(subject: "ctxbus.default.z.txn", data: newer.bytes, messageID: "z:1", stream: stream)
        try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:01", name: "after")])]))
        let deadline = ContinuousClock.now + .seconds(30)
        while try await a.status().objectValue?["applied"]?.objectValue?["z"]?.intValue != 1 {
            guard ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let status = try await a.status().objectValue ?? [:]
        expectEqual(status["refused"]?.intValue, 2)
        expectEqual(status["unknown"]?.intValue, 2)
        expectEqual(status["applied"]?.objectValue?["z"]?.intValue, 1)
        let addresses = try await a.objects("Device").compactMap { $0["values"]?.objectValue?["address"]?.stringValue }
        expectEqual(addresses.sorted(), ["AA:00:00:00:00:01", "AA:00:00:00:00:09"])
        expectTrue(a.fleet!.standardError.contains("refused message"))
    }
}
