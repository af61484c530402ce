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
