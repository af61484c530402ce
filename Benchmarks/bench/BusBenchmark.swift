import ContextBusClient
import ContextBusServer
import ContextBusTransport
import ContextBusWire
import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization

/// `bus.ping` round trips per second through a real `BusServer`: the per-request cost of the bus layer (framing,
/// JSON, session rules, the client's bookkeeping) with nothing behind it.
enum BusBenchmark {
    static let duration: Duration = .seconds(2)

    static func run() throws {
        print(
            "busecho: bus.ping round trips, \(duration) per case, \(ProcessInfo.processInfo.activeProcessorCount) CPUs")
        let directory = NSTemporaryDirectory() + "ctxbus-busecho-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = BusServer.Configuration(
            name: "busecho", version: "0", socketPath: directory + "/bus.sock")
        configuration.socketActivation = nil
        let server = BusServer(configuration: configuration)
        try server.start()
        defer { blocking { await server.shutdown(gracefully: false) } }
        let path = configuration.socketPath

        report("raw blocking client, 1 connection", try rawBlockingClient(path: path, connections: 1))
        report("raw blocking clients, 50 connections", try rawBlockingClient(path: path, connections: 50))
        report("BusClient.call, 1 connection", try asyncClients(path: path, connections: 1, inFlightEach: 1))
        report("BusClient.call, 50 connections", try asyncClients(path: path, connections: 50, inFlightEach: 1))
        report(
            "BusClient.call, 1 connection x 50 in flight",
            try asyncClients(path: path, connections: 1, inFlightEach: 50))
        report("BusClient.callAndWait, 1 connection", try blockingClient(path: path))
    }

    private static func report(_ name: String, _ roundTripsPerSecond: Double) {
        let padded = name.padding(toLength: 46, withPad: " ", startingAt: 0)
        print("  \(padded) \(Int(roundTripsPerSecond).formatted()) round trips/s")
    }

    // MARK: - Cases

    /// Plain blocking sockets writing a pre-encoded ping and reading the answer: the server's own cost.
    private static func rawBlockingClient(path: String, connections: Int) throws -> Double {
        let peers = try (0..<connections).map { _ in try RawPeer(path: path) }
        for peer in peers { try peer.hello() }
        let total = Atomic<Int>(0)
        let start = ContinuousClock.now
        let end = start + duration
        // One thread per connection (concurrentPerform would run only one per CPU at a time).
        let finished = DispatchGroup()
        for peer in peers {
            finished.enter()
            Thread {
                defer { finished.leave() }
                var count = 0
                repeat {
                    for _ in 0..<64 {
                        peer.write(RawPeer.ping)
                        guard peer.readFrame() != nil else { return }
                    }
                    count += 64
                } while ContinuousClock.now < end
                total.add(count, ordering: .relaxed)
            }.start()
        }
        finished.wait()
        return Double(total.load(ordering: .relaxed)) / (ContinuousClock.now - start).seconds
    }

    /// `BusClient`s on the shared client loop, each with `inFlightEach` tasks calling `bus.ping` in a loop.
    private static func asyncClients(path: String, connections: Int, inFlightEach: Int) throws -> Double {
        try blocking {
            var clients: [BusClient] = []
            for index in 0..<connections {
                clients.append(try await BusClient.connect(to: path, clientName: "bench-\(index)"))
            }
            defer { for client in clients { client.close() } }
            let start = ContinuousClock.now
            let end = start + duration
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in clients {
                    for _ in 0..<inFlightEach {
                        group.addTask {
                            var count = 0
                            repeat {
                                for _ in 0..<64 { _ = try await client.call(BusPing.self) }
                                count += 64
                            } while ContinuousClock.now < end
                            return count
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            return Double(total) / (ContinuousClock.now - start).seconds
        }
    }

    /// One thread making blocking `callAndWait` pings.
    private static func blockingClient(path: String) throws -> Double {
        let client = try blocking { try await BusClient.connect(to: path, clientName: "bench-blocking") }
        defer { client.close() }
        let start = ContinuousClock.now
        let end = start + duration
        var count = 0
        repeat {
            for _ in 0..<64 { _ = try client.callAndWait(BusPing.self, EmptyObject()) }
            count += 64
        } while ContinuousClock.now < end
        return Double(count) / (ContinuousClock.now - start).seconds
    }

    // MARK: - Helpers

    /// Runs async work from the synchronous benchmark runner and waits for it.
    private static func blocking<Result: Sendable>(
        _ body: @escaping @Sendable () async throws -> Result
    ) throws -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0 }!.get()
    }

    private static func blocking(_ body: @escaping @Sendable () async -> Void) {
        _ = try? blocking { () async throws -> Int in
            await body()
            return 0
        }
    }
}

/// A minimal blocking client, as a program in another language would write one.
private final class RawPeer: @unchecked Sendable {
    // @unchecked Sendable: each peer is used by one benchmark thread only.
    static let ping = frame(#"{"jsonrpc":"2.0","id":1,"method":"bus.ping"}"#)
    private let descriptor: Int32
    private var header = [UInt8](repeating: 0, count: 4)
    private var body = [UInt8](repeating: 0, count: 256)

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else { throw SystemError(errno: errno, operation: "connect(\(path))") }
    }

    deinit {
        close(descriptor)
    }

    static func frame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        let n = UInt32(payload.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + payload
    }

    func hello() throws {
        write(Self.frame(#"{"jsonrpc":"2.0","id":0,"method":"bus.hello","params":{"protocol":1,"client":"raw"}}"#))
        guard readFrame() != nil else { throw SystemError(errno: ECONNRESET, operation: "bus.hello") }
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, $0.count - offset, 0) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads one frame; returns its length.
    func readFrame() -> Int? {
        guard readExactly(into: &header, count: 4) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        if body.count < length { body = [UInt8](repeating: 0, count: length) }
        return readExactly(into: &body, count: length) ? length : nil
    }

    private func readExactly(into buffer: inout [UInt8], count: Int) -> Bool {
        var offset = 0
        while offset < count {
            let got = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + offset, count - offset, 0) }
            if got <= 0 { return false }
            offset += got
        }
        return true
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
