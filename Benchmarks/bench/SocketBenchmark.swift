import ContextBusTransport
import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization

/// 200-byte ping-pong round trips per second: over the transport's event loops, against a bare blocking
/// `socketpair` between two threads for scale.
enum SocketBenchmark {
    static let messageSize = 200
    static let duration: Duration = .seconds(2)

    static func run() throws {
        print("socket: \(messageSize)-byte ping-pong, \(duration) per case, \(Syscalls.processorCount) CPUs")
        report("blocking socketpair, 2 threads", try blockingSocketPair())
        report("blocking client -> event loop echo", try blockingClientToLoop())
        report("event loop client -> echo, 1 loop", try loopToLoop(loopCount: 1))
        report("event loop client -> echo, 2 loops", try loopToLoop(loopCount: 2))
    }

    private static func report(_ name: String, _ roundTripsPerSecond: Double) {
        let padded = name.padding(toLength: 40, withPad: " ", startingAt: 0)
        print("  \(padded) \(Int(roundTripsPerSecond).formatted()) round trips/s")
    }

    // MARK: - Cases

    /// Two threads, each blocking in `recv`/`send` on one end of a socket pair.
    private static func blockingSocketPair() throws -> Double {
        let (client, server) = try FileDescriptor.makeSocketPair()
        Syscalls.setBlocking(client)
        Syscalls.setBlocking(server)
        let echo = Thread {
            var buffer = [UInt8](repeating: 0, count: messageSize)
            while Syscalls.readExactly(server, into: &buffer) { Syscalls.writeAll(server, buffer) }
        }
        echo.start()
        let rate = blockingPingPong(over: client)
        client.close()  // the echo thread sees end of file and stops
        return rate
    }

    /// A blocking client thread against an echo server on an event loop, over a real listener.
    private static func blockingClientToLoop() throws -> Double {
        try withEchoServer(loopCount: 1) { group, address in
            // A plain blocking socket, as a minimal client in another language would use.
            let client = try Syscalls.blockingConnect(to: address.path)
            defer { client.close() }
            return blockingPingPong(over: client)
        }
    }

    /// A client connection on an event loop sending the next message when the echo of the last one is complete.
    private static func loopToLoop(loopCount: Int) throws -> Double {
        try withEchoServer(loopCount: loopCount) { group, address in
            let client = try SocketConnection.connect(to: address, on: group.loops[loopCount - 1])
            let message = [UInt8](repeating: 0x5A, count: messageSize)
            let counters = Mutex((pending: 0, roundTrips: 0))
            let finished = DispatchSemaphore(value: 0)
            let start = ContinuousClock.now
            let end = start + duration
            client.start(
                .init(onRead: { bytes in
                    let next = counters.withLock { counters -> Bool? in
                        counters.pending += bytes.count
                        guard counters.pending >= messageSize else { return nil }
                        counters.pending -= messageSize
                        counters.roundTrips += 1
                        return counters.roundTrips % 256 != 0 || ContinuousClock.now < end
                    }
                    switch next {
                    case true?: client.write(message)
                    case false?: finished.signal()
                    case nil: break
                    }
                }))
            client.write(message)
            finished.wait()
            let elapsed = ContinuousClock.now - start
            client.close()
            return Double(counters.withLock { $0.roundTrips }) / elapsed.seconds
        }
    }

    // MARK: - Helpers

    private static func withEchoServer(
        loopCount: Int, _ body: (EventLoopGroup, UnixSocketAddress) throws -> Double
    ) throws -> Double {
        let directory = NSTemporaryDirectory() + "ctxbus-bench-\(getpid())"
        let address = try UnixSocketAddress(path: directory + "/bench.sock")
        let group = try EventLoopGroup(loopCount: loopCount, name: "bench")
        defer {
            group.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let listener = try UnixListener.listen(
            on: address, group: group, options: .init(socketActivation: nil)
        ) { connection in
            connection.start(.init(onRead: { bytes in connection.write(bytes) }))
        }
        defer { listener.close() }
        return try body(group, address)
    }

    private static func blockingPingPong(over client: FileDescriptor) -> Double {
        var buffer = [UInt8](repeating: 0x5A, count: messageSize)
        let start = ContinuousClock.now
        let end = start + duration
        var roundTrips = 0
        repeat {
            for _ in 0..<256 {
                Syscalls.writeAll(client, buffer)
                guard Syscalls.readExactly(client, into: &buffer) else { return 0 }
            }
            roundTrips += 256
        } while ContinuousClock.now < end
        return Double(roundTrips) / (ContinuousClock.now - start).seconds
    }
}

/// Blocking socket calls for the baseline cases.
private enum Syscalls {
    static var processorCount: Int { sysconf(Int32(_SC_NPROCESSORS_ONLN)) }

    static func setBlocking(_ descriptor: FileDescriptor) {
        _ = fcntl(descriptor.rawValue, F_SETFL, fcntl(descriptor.rawValue, F_GETFL) & ~O_NONBLOCK)
    }

    static func blockingConnect(to path: String) throws -> FileDescriptor {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let result = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw SystemError(errno: errno, operation: "connect(\(path))") }
        return FileDescriptor(adopting: fd)
    }

    static func readExactly(_ descriptor: FileDescriptor, into buffer: inout [UInt8]) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let got = buffer.withUnsafeMutableBytes {
                recv(descriptor.rawValue, $0.baseAddress! + offset, $0.count - offset, 0)
            }
            if got <= 0 { return false }
            offset += got
        }
        return true
    }

    static func writeAll(_ descriptor: FileDescriptor, _ buffer: [UInt8]) {
        var offset = 0
        while offset < buffer.count {
            let sent = buffer.withUnsafeBytes {
                send(descriptor.rawValue, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }
            offset += sent
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
