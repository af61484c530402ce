import Dispatch
import Foundation
@preconcurrency import Glibc
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

/// Generous bound for waiting on the loop thread; reaching it means the behaviour is missing, not slow.
let patience: DispatchTimeInterval = .seconds(20)

/// A temporary directory, removed with everything in it by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/ctxbus-test-XXXXXX".utf8CString)
        guard let created = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SystemError(errno: errno, operation: "mkdtemp")
        }
        path = String(cString: created)
    }

    func address(_ name: String = "bus.sock") throws -> UnixSocketAddress {
        try UnixSocketAddress(path: path + "/" + name)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Runs `body` with a started loop (or group) and always shuts it down.
@discardableResult
func withLoop<Result>(_ body: (EventLoop) throws -> Result) throws -> Result {
    let loop = try EventLoop(name: "test")
    defer { loop.shutdown() }
    return try body(loop)
}

@discardableResult
func withGroup<Result>(loops: Int = 1, _ body: (EventLoopGroup) throws -> Result) throws -> Result {
    let group = try EventLoopGroup(loopCount: loops, name: "test")
    defer { group.shutdown() }
    return try body(group)
}

/// Thread-safe record of what a connection's handlers saw, with waits.
final class ConnectionProbe: Sendable {
    private struct Seen {
        var bytes: [UInt8] = []
        var closeReasons: [CloseReason] = []
        var overflows: [OutboundOverflow] = []
        var drains = 0
    }
    private let seen = Locked(Seen())
    private let changed = DispatchSemaphore(value: 0)

    var handlers: SocketConnection.Handlers {
        SocketConnection.Handlers(
            onRead: { [self] bytes in update { $0.bytes += bytes } },
            onOverflow: { [self] overflow in update { $0.overflows.append(overflow) } },
            onDrain: { [self] in update { $0.drains += 1 } },
            onClose: { [self] reason in update { $0.closeReasons.append(reason) } })
    }

    var bytes: [UInt8] { seen.withLock { $0.bytes } }
    var closeReasons: [CloseReason] { seen.withLock { $0.closeReasons } }
    var overflows: [OutboundOverflow] { seen.withLock { $0.overflows } }
    var drains: Int { seen.withLock { $0.drains } }

    private func update(_ change: (inout Seen) -> Void) {
        seen.withLock { change(&$0) }
        changed.signal()
    }

    /// Waits until `condition` holds; `false` if it did not within `patience`.
    func wait(until condition: (ConnectionProbe) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + patience
        while !condition(self) {
            if changed.wait(timeout: deadline) == .timedOut { return condition(self) }
        }
        return true
    }

    func waitForClose() -> CloseReason? {
        wait { !$0.closeReasons.isEmpty } ? closeReasons.first : nil
    }
}

/// A one-shot signal for "this happened", with a bounded wait.
final class Occurrence: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    func fire() { semaphore.signal() }
    func wait() -> Bool { semaphore.wait(timeout: .now() + patience) == .success }
}

/// Blocking helpers for the raw peer end of a socket pair.
enum RawPeer {
    static func setBlocking(_ descriptor: FileDescriptor) {
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        _ = fcntl(descriptor.rawValue, F_SETFL, flags & ~O_NONBLOCK)
    }

    /// Reads until `count` bytes or end of file.
    static func read(_ descriptor: FileDescriptor, count: Int, chunk: Int = 64 * 1024) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(min(count, 64 << 20))
        var buffer = [UInt8](repeating: 0, count: chunk)
        while result.count < count {
            let wanted = min(chunk, count - result.count)
            let got = buffer.withUnsafeMutableBytes { bytes in
                retryingInterrupts { recv(descriptor.rawValue, bytes.baseAddress, wanted, 0) }
            }
            if got <= 0 { break }
            buffer.withUnsafeBytes { result.append(contentsOf: $0[0..<got]) }
        }
        return result
    }

    /// Reads until end of file.
    static func readToEnd(_ descriptor: FileDescriptor) -> [UInt8] {
        read(descriptor, count: Int.max)
    }

    static func write(_ descriptor: FileDescriptor, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { bytes in
                retryingInterrupts { send(descriptor.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            }
            precondition(sent > 0, "raw peer write failed: errno \(errno)")
            offset += sent
        }
    }
}

/// `count` bytes of a pattern that reveals reordering, loss and duplication.
func patternBytes(count: Int, seed: UInt32 = 1) -> [UInt8] {
    var state = seed
    return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
        for index in 0..<count {
            state = state &* 1_664_525 &+ 1_013_904_223
            buffer[index] = UInt8(truncatingIfNeeded: state >> 24)
        }
        initialized = count
    }
}

func fileMode(_ path: String) -> UInt32? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return UInt32(status.st_mode & 0o7777)
}

func fileType(_ path: String) -> UInt32? {
    var status = stat()
    guard lstat(path, &status) == 0 else { return nil }
    return UInt32(status.st_mode & S_IFMT)
}

/// Runs `body` while the loop's thread is kept busy by a task, so that nothing it was handed runs meanwhile.
func whileHolding(_ loop: EventLoop, _ body: () throws -> Void) throws {
    let entered = Occurrence()
    let release = DispatchSemaphore(value: 0)
    loop.execute {
        entered.fire()
        release.wait()
    }
    defer { release.signal() }
    try #require(entered.wait(), "the loop ran the holding task")
    try body()
}
