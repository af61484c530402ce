import ContextBusSupport
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusServer
@testable import ContextBusTransport

/// A datagram socket bound to `address` (a path or `@name`) that returns what it receives.
private final class DatagramReceiver {
    let descriptor: Int32

    init(address: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (isAbstract ? 0 : 1))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        try #require(bound == 0, "bind(\(address)): \(String(cString: strerror(errno)))")
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(descriptor) }

    func receive() -> String? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }
}

struct ServiceNotifierTests {
    @Test func sendsAssignmentsAsOneDatagramToAPath() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)").path
        defer { unlink(path) }
        let receiver = try DatagramReceiver(address: path)
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": path], processID: 42)
        notifier.ready(status: "serving\nsomething", mainPID: 42)
        expectEqual(receiver.receive(), "READY=1\nSTATUS=serving something\nMAINPID=42")
        notifier.stopping()
        expectEqual(receiver.receive(), "STOPPING=1")
    }

    @Test func sendsToAnAbstractSocket() throws {
        let name = "@ctxbus-notifier-test-\(UUID().uuidString)"
        let receiver = try DatagramReceiver(address: name)
        ServiceNotifier(environment: ["NOTIFY_SOCKET": name], processID: 1).watchdog()
        expectEqual(receiver.receive(), "WATCHDOG=1")
    }

    @Test func withoutNotifySocketNothingIsSentAndThereIsNoWatchdog() {
        let notifier = ServiceNotifier(environment: ["WATCHDOG_USEC": "1000000"], processID: 1)
        expectFalse(notifier.isEnabled)
        expectNil(notifier.watchdogInterval)
        notifier.ready()
    }

    @Test func theWatchdogIsOnlyOursWhenWatchdogPIDIsUnsetOrOurs() {
        let socket = ["NOTIFY_SOCKET": "/run/systemd/notify", "WATCHDOG_USEC": "30000000"]
        expectEqual(ServiceNotifier(environment: socket, processID: 7).watchdogInterval, .seconds(30))
        expectEqual(
            ServiceNotifier(environment: socket.merging(["WATCHDOG_PID": "7"]) { $1 }, processID: 7).watchdogInterval,
            .seconds(30))
        expectNil(
            ServiceNotifier(environment: socket.merging(["WATCHDOG_PID": "8"]) { $1 }, processID: 7).watchdogInterval)
        expectNil(
            ServiceNotifier(environment: socket.merging(["WATCHDOG_USEC": "x"]) { $1 }, processID: 7).watchdogInterval)
    }

    @Test func aFailedSendIsReportedOnceAndNotThrown() {
        let errors = Locked<[String]>([])
        let notifier = ServiceNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"], processID: 1) { message in
            errors.withLock { $0.append(message) }
        }
        notifier.watchdog()
        notifier.watchdog()
        let reported = errors.withLock { $0 }
        expectEqual(reported.count, 1)
        expectTrue(reported.first?.contains("/nonexistent/notify") == true, "\(reported)")
    }

    @Test func anAddressThatCannotBeASocketIsRefused() {
        #expect(throws: DatagramSocket.SendError.self) { try DatagramSocket.send([1], to: "@") }
        #expect(throws: DatagramSocket.SendError.self) {
            try DatagramSocket.send([1], to: "/" + String(repeating: "x", count: 200))
        }
    }
}

struct ServiceWatchdogTests {
    @Test func pingsWhileEveryLoopTurnsAndNotWhileOneIsWedged() throws {
        let loops = try [EventLoop(name: "watchdog-0"), EventLoop(name: "watchdog-1")]
        defer { for loop in loops { loop.shutdown() } }
        let pings = Locked<[ContinuousClock.Instant]>([])
        let watchdog = ServiceWatchdog(loops: loops, interval: .milliseconds(150)) {
            pings.withLock { $0.append(.now) }
        }
        /// Polls for up to 20 s (a guard against a hang, not a timing check).
        func waitUntil(_ condition: () -> Bool) -> Bool {
            let deadline = ContinuousClock.now + .seconds(20)
            while !condition(), ContinuousClock.now < deadline { usleep(10_000) }
            return condition()
        }
        watchdog.start()
        expectTrue(waitUntil { pings.withLock { $0.count } >= 3 }, "pings while both loops turn")
        // The second loop blocks for 700 ms, as a handler that must not block there would: the pings leave a gap of
        // at least that less a check period (50 ms), where they come every 50 ms otherwise, then resume. The gap is
        // measured between the pings, not from this thread, which a busy machine may delay.
        let before = pings.withLock { $0.count }
        loops[1].execute { usleep(700_000) }
        func longestClosedGap() -> Duration {
            let times = Array(pings.withLock { $0 }[(before - 1)...])
            return zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? .zero
        }
        expectTrue(waitUntil { longestClosedGap() >= .milliseconds(600) }, "no gap while a loop was wedged")
        watchdog.stop()
        let stopped = pings.withLock { $0.count }
        usleep(200_000)
        expectEqual(pings.withLock { $0.count }, stopped, "no ping after stop()")
    }
}
