import ContextBusSupport
import Foundation
@preconcurrency import Glibc
import Synchronization

/// A fake service manager: a `SOCK_DGRAM` socket a service's `$NOTIFY_SOCKET` names (a path, or `@name` in the
/// abstract namespace), keeping every datagram it receives with the time it arrived.
public final class NotifySocketListener: Sendable {
    /// One datagram: its text and when it arrived.
    public struct Message: Sendable {
        public var text: String
        public var time: ContinuousClock.Instant
    }

    /// What to put in `$NOTIFY_SOCKET`.
    public let address: String
    private let descriptor: Int32
    private let received = Locked<[Message]>([])
    private let isClosed = Atomic<Bool>(false)

    /// Binds `address`: a file path, or `@name` for the abstract namespace.
    public init(address: String) throws {
        self.address = address
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw NotifySocketError(operation: "socket", errno: errno) }
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in raw.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (isAbstract ? 0 : 1))
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            Glibc.close(descriptor)
            throw NotifySocketError(operation: "bind(\(address))", errno: errno)
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread.detachNewThread { [self] in receive() }
    }

    /// Every datagram so far.
    public var messages: [Message] { received.withLock { $0 } }

    /// Waits until a datagram satisfies `condition`, or `timeout` passes; returns whether one did.
    public func wait(for timeout: Duration, until condition: (Message) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if messages.contains(where: condition) { return true }
            usleep(10_000)
        }
        return messages.contains(where: condition)
    }

    /// The longest time between two `WATCHDOG=1`s from the last one before `start` on, and whether a ping came
    /// after it (`isClosed`: the pings resumed). A wedged event loop shows as a long gap that closes once it is free.
    public func longestWatchdogGap(after start: ContinuousClock.Instant) -> (gap: Duration, isClosed: Bool) {
        let pings = messages.filter { $0.text == "WATCHDOG=1" }.map(\.time)
        let first = pings.lastIndex { $0 < start } ?? 0
        let times = Array(pings[first...])
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        let open = times.last.map { ContinuousClock.now - $0 } ?? .zero
        let closed = gaps.max() ?? .zero
        return open > closed ? (open, false) : (closed, true)
    }

    /// Waits until the pings after `start` show a closed gap of at least `gap` (a loop was wedged that long, then
    /// freed); returns the longest gap seen, and whether one did within `timeout`.
    public func waitForWatchdogGap(
        of gap: Duration, after start: ContinuousClock.Instant, timeout: Duration = .seconds(20)
    ) -> (longest: Duration, isSeen: Bool) {
        let seen = wait(for: timeout) { _ in
            let found = longestWatchdogGap(after: start)
            return found.gap >= gap && found.isClosed
        }
        return (longestWatchdogGap(after: start).gap, seen)
    }

    /// Whether the datagrams so far are `READY=1…` first, `STOPPING=1…` last, and between them only `WATCHDOG=1` and
    /// `STATUS=` lines, with at least `pings` pings; the reason when not.
    public func readyWatchdogStoppingOrder(pings: Int) -> String? {
        let texts = messages.map(\.text)
        guard let first = texts.first, first.hasPrefix("READY=1\n") else { return "not READY=1 first: \(texts)" }
        guard let last = texts.last, texts.count > 1, last.hasPrefix("STOPPING=1\n") else {
            return "not STOPPING=1 last: \(texts.suffix(3))"
        }
        let middle = texts.dropFirst().dropLast()
        if let other = middle.first(where: { $0 != "WATCHDOG=1" && !$0.hasPrefix("STATUS=") }) {
            return "between READY and STOPPING: \(other)"
        }
        let count = middle.filter { $0 == "WATCHDOG=1" }.count
        return count >= pings ? nil : "\(count) WATCHDOG=1 between READY and STOPPING, fewer than \(pings)"
    }

    /// Stops receiving and closes the socket (and removes a path).
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if !address.hasPrefix("@") { unlink(address) }
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !isClosed.load(ordering: .acquiring) {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { continue }
            let message = Message(text: String(decoding: buffer[0..<count], as: UTF8.self), time: .now)
            received.withLock { $0.append(message) }
        }
        Glibc.close(descriptor)
    }
}

public struct NotifySocketError: Error, CustomStringConvertible {
    var operation: String
    var errno: Int32

    public var description: String { "\(operation) failed: \(String(cString: strerror(errno)))" }
}
