import ContextBusClient
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport

/// What `fleet.status` reports while something is down (PROTOCOL.md, "Fleet": `pending` is own transactions not
/// yet published plus received ones not yet applied; `applied` is the highest txn applied here), against a real
/// nats-server, storesvc and fleetsvc.
@Suite(.serialized, .enabled(if: natsServerPath != nil, "nats-server is not installed (scripts/setup installs it)"))
struct FleetStatusTests {
    /// Saves made while the NATS server is away count in `pending` until they are published.
    @Test func savesMadeWhileNATSIsDownCountAsPendingUntilPublished() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let a = try await TestGateway.start("a", nats: nats)
        defer { a.stop() }
        try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:01", name: "one")])]))
        try await waitForConvergence([a])
        await nats.stopKeepingData()
        let device = try #require(try await a.device("AA:00:00:00:00:01"))
        for i in 0..<5 {
            try await a.save(.object(["insert": .array([readingInsert("r\(i)", device: .string(device))])]))
        }
        let down = try await waitForStatus(of: a, "pending to count the 5 saves") {
            ($0["pending"]?.intValue ?? 0) >= 5
        }
        expectEqual(down["connected"], .bool(false))
        expectEqual(down["published"]?.intValue, 1)
        try await nats.restart()
        let up = try await waitForStatus(of: a, "the 5 saves to be published") { $0["pending"]?.intValue == 0 }
        expectEqual(up["published"]?.intValue, 6)
    }

    /// While the receiving gateway's storesvc is down, a received transaction is not counted as applied (it is
    /// pending); once storesvc is back and the save committed, it is.
    @Test func aReceivedTransactionCountsAsAppliedOnlyOnceItsSaveCommitted() async throws {
        let nats = try await TestNATSServer.start()
        defer { nats.stop() }
        let a = try await TestGateway.start("a", nats: nats)
        defer { a.stop() }
        let b = try await TestGateway.start("b", nats: nats)
        defer { b.stop() }
        try await a.save(.object(["insert": .array([deviceInsert("AA:00:00:00:00:01", name: "one")])]))
        try await waitForConvergence([a, b])
        await b.killStore()
        let device = try #require(try await a.device("AA:00:00:00:00:01"))
        try await a.save(.object(["insert": .array([readingInsert("r0", device: .string(device))])]))
        // b's bridge has the message and its save failed (storesvc is away).
        try await b.fleet!.waitUntil(seconds: 30, "b's bridge to try applying a:2") { _, errors in
            errors.contains("inbound: applying a:2")
        }
        let waiting = try await b.status().objectValue ?? [:]
        expectEqual(waiting["applied"]?.objectValue?["a"]?.intValue, 1)
        expectTrue((waiting["pending"]?.intValue ?? 0) >= 1, "\(waiting)")
        try await b.startStore()
        let done = try await waitForStatus(of: b, "a:2 to be applied") {
            $0["applied"]?.objectValue?["a"]?.intValue == 2 && $0["pending"]?.intValue == 0
        }
        expectEqual(done["state"], .string("following"))
        expectEqual(try await b.objects("Reading").count, 1)
    }
}

/// Polls `gateway`'s `fleet.status` until `condition` holds (a guard of 30 s against hanging, not a timing check).
@discardableResult
func waitForStatus(
    of gateway: TestGateway, _ what: String, _ condition: ([String: JSONValue]) -> Bool
) async throws -> [String: JSONValue] {
    let deadline = ContinuousClock.now + .seconds(30)
    var last: [String: JSONValue] = [:]
    while true {
        if let status = try? await gateway.status().objectValue {
            if condition(status) { return status }
            last = status
        }
        guard ContinuousClock.now < deadline else {
            throw ChildProcessError.timedOut(
                what, output: (try? JSONWriter().string(.object(last))) ?? "",
                errors: gateway.fleet?.standardError ?? "")
        }
        try await Task.sleep(for: .milliseconds(50))
    }
}
