import ContextBusServer
import ContextBusWire
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

/// A real `storesvc` started the way systemd starts a `Type=notify` unit with `WatchdogSec=`: `$NOTIFY_SOCKET`
/// names a datagram socket the test holds (a fake service manager), `$WATCHDOG_USEC` asks for pings.
@Suite struct StoreServiceNotifyTests {
    /// 300 ms: a ping every 100 ms.
    static let watchdogUsec = "300000"

    @Test func tellsTheServiceManagerReadyThenWatchdogThenStoppingInOrder() async throws {
        let directory = try makeTemporaryDirectory()
        let listener = try NotifySocketListener(address: directory.appendingPathComponent("notify.sock").path)
        defer { listener.close() }
        let service = try StoreServiceProcess(
            directory: directory,
            environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": Self.watchdogUsec])
        defer { service.destroy() }
        expectTrue(listener.wait(for: .seconds(20)) { $0.text.hasPrefix("READY=1") }, "no READY=1: \(service.log)")
        let enough = listener.wait(for: .seconds(20)) { _ in
            listener.messages.filter { $0.text == "WATCHDOG=1" }.count >= 3
        }
        expectTrue(enough, "fewer than 3 WATCHDOG=1")
        service.signal(SIGTERM)
        expectEqual(service.waitForExit(), 0)
        expectTrue(listener.wait(for: .seconds(5)) { $0.text.hasPrefix("STOPPING=1") }, "no STOPPING=1")
        let texts = listener.messages.map(\.text)
        let ready = try #require(texts.first)
        expectTrue(ready.hasPrefix("READY=1\nSTATUS=serving \(service.databasePath) at txn 0\nMAINPID="), "\(ready)")
        expectEqual(ready.split(separator: "\n").last, "MAINPID=\(service.pid)")
        expectTrue(texts.last?.hasPrefix("STOPPING=1\nSTATUS=stopping") == true, "\(texts.last ?? "")")
        let middle = texts.dropFirst().dropLast()
        expectTrue(middle.allSatisfy { $0 == "WATCHDOG=1" }, "between READY and STOPPING: \(Array(middle))")
    }

    @Test func notifiesAnAbstractSocket() throws {
        let directory = try makeTemporaryDirectory()
        let listener = try NotifySocketListener(address: "@ctxbus-test-\(UUID().uuidString)")
        defer { listener.close() }
        let service = try StoreServiceProcess(directory: directory, environment: ["NOTIFY_SOCKET": listener.address])
        defer { service.destroy() }
        expectTrue(listener.wait(for: .seconds(20)) { $0.text.hasPrefix("READY=1") }, "no READY=1: \(service.log)")
        // No $WATCHDOG_USEC: no pings.
        usleep(300_000)
        expectTrue(listener.messages.allSatisfy { $0.text != "WATCHDOG=1" })
    }

    @Test func noWatchdogPingsWhileAnEventLoopIsWedgedThenPingsAgain() async throws {
        let directory = try makeTemporaryDirectory()
        let listener = try NotifySocketListener(address: directory.appendingPathComponent("notify.sock").path)
        defer { listener.close() }
        let service = try StoreServiceProcess(
            directory: directory, arguments: ["--test-hooks"],
            environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": Self.watchdogUsec])
        defer { service.destroy() }
        expectTrue(listener.wait(for: .seconds(20)) { $0.text == "WATCHDOG=1" }, "no WATCHDOG=1: \(service.log)")
        let client = try await service.client()
        defer { client.close() }
        // Blocks the loop serving this connection for 1.5 s (test.wedgeEventLoop, a test-only hook): one of the
        // two loops, which the watchdog needs both of.
        let sent = ContinuousClock.now
        _ = try await client.call(TestWedgeEventLoop.self, WedgeParams(milliseconds: 1500))
        // Pings stop while the loop is wedged and come back after: from the last ping before the request, the
        // pings leave a gap of at least the wedge less a check period (100 ms) and a little slack; a watchdog that
        // pinged from a thread of its own, or from one loop only, would leave gaps of about 100 ms. (Times are
        // the pings' own, not this test's, which a busy machine may delay.)
        let (gap, resumed) = listener.waitForWatchdogGap(of: .milliseconds(1300), after: sent)
        expectTrue(resumed, "no gap of 1.3 s in the pings while a loop was wedged for 1.5 s (longest: \(gap))")
        expectLessThan(gap, .seconds(10), "pings did not resume")
        // Still serving.
        _ = try await client.call(BusPing.self)
    }
}
