import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import fleetsvc

/// Remote commands (PROTOCOL.md, "Fleet": a `device.run` sent on `ctxbus.<fleet>.<gateway>.commands` runs on that
/// gateway's devicesvc, once per command id), against a real nats-server, storesvc, devicesvc on the simulated
/// BlueZ, and fleetsvc: gateway a runs commands (`--device`), the hub sends them.
@Suite(
    .serialized,
    .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"),
    .enabled(if: TestBlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus (scripts/bluez-sim)"))
struct FleetCommandTests {
    static let battery: JSONValue = .object([
        "address": .string("AA:BB:CC:DD:EE:01"),
        "steps": .array([
            .object(["op": .string("connect")]), .object(["op": .string("read"), "characteristic": .string("2a19")]),
            .object(["op": .string("disconnect")]),
        ]),
    ])

    /// The processes of one test: nats-server, the simulator, gateway a (with devicesvc) and the hub.
    struct Fleet {
        let nats: TestNATSServer
        let simulator: TestBlueZSimulator
        let a: TestGateway
        let hub: TestGateway

        static func start() async throws -> Fleet {
            let nats = try await TestNATSServer.start()
            let simulator = try await TestBlueZSimulator.start()
            let a = TestGateway(name: "a", natsURL: nats.url)
            try await a.startStore()
            try await a.startDevice(bus: simulator.busAddress)
            try await a.startFleet(runsCommands: true)
            let hub = try await TestGateway.start("hub", nats: nats)
            try await waitForConvergence([a, hub])
            return Fleet(nats: nats, simulator: simulator, a: a, hub: hub)
        }

        func stop() {
            hub.stop()
            a.stop()
            simulator.stop()
            nats.stop()
        }
    }

    /// A command sent twice with one id runs once on a's devicesvc; the second answer is the first result, marked
    /// repeated. `ctxbus fleet run` sends one and prints its steps; `ctxbus fleet status` shows the counters.
    @Test func aCommandRunsOnceOnItsGatewayHoweverOftenItIsSent() async throws {
        let fleet = try await Fleet.start()
        defer { fleet.stop() }
        let params: JSONValue = .object([
            "gateway": .string("a"), "id": .string("battery-1"), "request": Self.battery,
        ])
        let first = try await fleet.hub.fleetCall("fleet.run", params)
        expectEqual(first.objectValue?["repeated"], .bool(false))
        expectEqual(first.objectValue?["gateway"], .string("a"))
        let results = first.objectValue?["result"]?.objectValue?["results"]?.arrayValue ?? []
        expectEqual(results.count, 3)
        expectEqual(results.dropFirst().first?.objectValue?["number"], .double(87))
        let second = try await fleet.hub.fleetCall("fleet.run", params)
        expectEqual(second.objectValue?["repeated"], .bool(true))
        expectEqual(second.objectValue?["result"], first.objectValue?["result"])
        let chains = try await fleet.a.deviceCall("device.stats").objectValue?["chains"]?.objectValue
        expectEqual(chains?["started"]?.intValue, 1)

        let ctxbus = try ChildProcess(
            executable: productsDirectory + "/ctxbus",
            arguments: [
                "fleet", "run", "a", "AA:BB:CC:DD:EE:01", "connect", "read:2a19", "disconnect", "--id", "battery-2",
                "--socket", fleet.hub.fleetSocket,
            ])
        defer { ctxbus.stop() }
        expectEqual(await ctxbus.waitForExit(), 0, "\(ctxbus.standardError)")
        expectTrue(ctxbus.standardOutput.contains("[1] read:2a19"), "\(ctxbus.standardOutput)")
        expectTrue(
            ctxbus.standardOutput.contains("command battery-2 on gateway a: chain "), "\(ctxbus.standardOutput)")

        let status = try await fleet.a.status().objectValue ?? [:]
        expectEqual(status["commandsRun"]?.intValue, 2)
        expectEqual(status["commandsRepeated"]?.intValue, 1)
        expectEqual(status["commandsRefused"]?.intValue, 0)
        let metrics = try await fleet.a.fleetCall("bus.metrics").objectValue?["text"]?.stringValue ?? ""
        expectTrue(
            metrics.contains(#"ctxbus_fleet_commands_total{service="fleetsvc",outcome="repeated"} 1"#), "\(metrics)")
        let printed = try ChildProcess(
            executable: productsDirectory + "/ctxbus", arguments: ["fleet", "status", "--socket", fleet.a.fleetSocket])
        defer { printed.stop() }
        expectEqual(await printed.waitForExit(), 0, "\(printed.standardError)")
        for line in ["gateway", "state", "following", "commandsRun", "commandsRepeated", "applied (gateway:txn)"] {
            expectTrue(printed.standardOutput.contains(line), "\(line) in \(printed.standardOutput)")
        }
    }

    /// On a's command subject: a message that is not a command, and a command whose chain devicesvc refuses. Each
    /// is logged and counted as refused; the bad chain's error is its remembered outcome (sent again, it is
    /// answered again, and nothing runs); a good command after them runs.
    @Test func aCommandWithABadChainIsRefusedAndTheRunnerGoesOn() async throws {
        let fleet = try await Fleet.start()
        defer { fleet.stop() }
        let peer = try JetStream(settings: .init(url: fleet.nats.url, name: "fleetsvc-tests"))
        defer { peer.close() }
        let inbox = try peer.newInbox()
        let replies = try peer.subscribeCore(subject: inbox)
        defer { replies.close() }
        _ = try peer.publish(
            subject: "ctxbus.default.a.commands", data: Array("{not a command".utf8), messageID: "junk",
            stream: "CTXBUS_DEFAULT_COMMANDS")
        let bad = FleetCommand(
            id: "bad-1", from: "tests", reply: inbox,
            request: .object([
                "address": .string("AA:BB:CC:DD:EE:01"), "steps": .array([.object(["op": .string("explode")])]),
            ]))
        for attempt in 0..<2 {
            _ = try peer.publish(
                subject: "ctxbus.default.a.commands", data: bad.bytes, messageID: "bad-1:\(attempt)",
                stream: "CTXBUS_DEFAULT_COMMANDS")
            let reply = try #require(try replies.next(timeoutMilliseconds: 30_000))
            let outcome = try #require(CommandOutcome(bytes: reply.data))
            guard case .failure(let error) = outcome.answer else {
                Issue.record("a bad chain answered \(outcome)")
                return
            }
            expectEqual(error.code, .invalidParams)
            expectEqual(outcome.isRepeated, attempt == 1)
        }
        let good = try await fleet.hub.fleetCall(
            "fleet.run", .object(["gateway": .string("a"), "request": Self.battery]))
        expectEqual(good.objectValue?["result"]?.objectValue?["results"]?.arrayValue?.count, 3)
        let status = try await fleet.a.status().objectValue ?? [:]
        expectEqual(status["commandsRefused"]?.intValue, 2)
        expectEqual(status["commandsRepeated"]?.intValue, 1)
        expectEqual(status["commandsRun"]?.intValue, 1)
        let chains = try await fleet.a.deviceCall("device.stats").objectValue?["chains"]?.objectValue
        expectEqual(chains?["started"]?.intValue, 1)
        expectTrue(fleet.a.fleet!.standardError.contains("refused message"))
        expectTrue(fleet.a.fleet!.standardError.contains("command bad-1 refused by devicesvc"))
    }

    /// A command for a gateway that runs none (the hub has no `--device`) stays queued: the sender gives up with
    /// `408` naming the command's id.
    @Test func aCommandNobodyRunsTimesOutNamingItsID() async throws {
        let fleet = try await Fleet.start()
        defer { fleet.stop() }
        do {
            _ = try await fleet.a.fleetCall(
                "fleet.run",
                .object([
                    "gateway": .string("hub"), "id": .string("nobody-1"), "request": Self.battery,
                    "timeoutMs": .int(500),
                ]))
            Issue.record("fleet.run answered without a runner")
        } catch let error as RPCError {
            expectEqual(error.code, .timeout)
            expectEqual(error.data?["id"], .string("nobody-1"))
            expectEqual(error.data?["gateway"], .string("hub"))
        }
    }
}
