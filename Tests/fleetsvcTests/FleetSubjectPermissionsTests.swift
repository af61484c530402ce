import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import fleetsvc

/// The sample server configuration `deploy/nats/fleet.conf` (PROTOCOL.md "Fleet", guarantee 5: a gateway
/// publishes only on its own subjects), run by a real nats-server with real gateways logged in as its users.
@Suite(.serialized, .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"))
struct FleetSubjectPermissionsTests {
    static let passwords = ["a": "secret-a", "b": "secret-b", "hub": "secret-hub"]

    /// The shipped configuration, its JetStream directory made the test server's own.
    static func configuration(storeDirectory: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(
            contentsOf: root.appendingPathComponent("deploy/nats/fleet.conf"), encoding: .utf8)
        let line = #"store_dir: "/var/lib/nats""#
        guard text.contains(line) else {
            throw ChildProcessError.timedOut("\(line) in fleet.conf", output: "", errors: "")
        }
        return text.replacingOccurrences(of: line, with: "store_dir: \"\(storeDirectory)\"")
    }

    func url(_ user: String, _ nats: TestNATSServer) -> String {
        "nats://\(user):\(Self.passwords[user] ?? "wrong")@127.0.0.1:\(nats.port)"
    }

    /// Gateways logged in as the configuration's users share their data and commands; a's user cannot publish on
    /// b's subject (the server refuses it, nothing reaches the stream), and fleetsvc's logs do not show passwords.
    @Test func eachGatewayPublishesOnlyItsOwnTransactions() async throws {
        let storeDirectory = makeTestDirectory(prefix: "fleet-nats-store")
        defer { try? FileManager.default.removeItem(atPath: storeDirectory) }
        let nats = try await TestNATSServer.start(
            configuration: try Self.configuration(storeDirectory: storeDirectory),
            environment: [
                "CTXBUS_NATS_PASSWORD_A": Self.passwords["a"]!, "CTXBUS_NATS_PASSWORD_B": Self.passwords["b"]!,
                "CTXBUS_NATS_PASSWORD_HUB": Self.passwords["hub"]!,
            ])
        defer { nats.stop() }
        var gateways: [TestGateway] = []
        defer { for gateway in gateways { gateway.stop() } }
        for name in ["a", "b", "hub"] {
            let gateway = TestGateway(name: name, natsURL: url(name, nats))
            gateways.append(gateway)
            try await gateway.startStore()
            try await gateway.startFleet(runsCommands: name != "hub")
        }
        let (a, b, hub) = (gateways[0], gateways[1], gateways[2])
        try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:01", name: "from-a")])]))
        try await b.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:02", name: "from-b")])]))
        let before = try await waitForConvergence(gateways)

        // a's user publishing as b: the server refuses it.
        let intruder = try JetStream(settings: .init(url: url("a", nats), name: "fleetsvc-tests"))
        defer { intruder.close() }
        let forged = FleetMessage(
            gateway: "b", txn: 99, previous: 0, clock: 1, author: nil,
            inserted: [.init(id: "b:Device/9", entity: "Device", values: ["address": .string("EVIL")])], updated: [],
            deleted: [])
        var refused = false
        do {
            _ = try intruder.publish(
                subject: "ctxbus.default.b.txn", data: forged.bytes, messageID: "b:99", stream: "CTXBUS_DEFAULT",
                timeoutMilliseconds: 2_000)
        } catch {
            refused = true
        }
        expectTrue(refused, "a's user published on b's subject")
        expectTrue(nats.log.contains(#"Publish Violation - User "a", Subject "ctxbus.default.b.txn""#), "\(nats.log)")
        // Its own subject is allowed, and what it publishes there is a's.
        try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:03", name: "later")])]))
        let after = try await waitForConvergence(gateways)
        expectTrue(!after.contains("EVIL"), "\(after)")
        expectTrue(after.contains("later") && before != after, "\(after)")
        expectEqual(try await hub.status().objectValue?["applied"]?.objectValue?["b"]?.intValue, 1)

        // Commands go through too: the hub's reaches a's runner (a has no devicesvc, so a answers 503).
        do {
            _ = try await hub.fleetCall(
                "fleet.run",
                .object([
                    "gateway": .string("a"), "timeoutMs": .int(20_000),
                    "request": .object([
                        "address": .string("AA:BB:CC:DD:EE:01"), "steps": .array([.object(["op": .string("connect")])]),
                    ]),
                ]))
            Issue.record("a ran a chain without a devicesvc")
        } catch let error as RPCError {
            expectEqual(error.code, .unavailable)
            expectTrue(error.message.hasPrefix("gateway a: devicesvc is not reachable"), "\(error)")
        }
        // The bridges needed nothing the configuration does not allow: the intruder's is the only violation.
        expectEqual(nats.log.components(separatedBy: "Violation").count - 1, 1, "\(nats.log)")
        for gateway in gateways {
            let log = gateway.fleet!.standardError
            expectTrue(!log.contains("secret-"), "a password in \(gateway.name)'s log: \(log)")
            expectTrue(log.contains("\(gateway.name):***@127.0.0.1"), "\(log)")
        }
    }
}
