import Dispatch
import Foundation
@preconcurrency import Glibc

@testable import ContextBusServer
@testable import ContextBusSupport
@testable import ContextBusTransport
@testable import ContextBusWire

// Methods, a server fixture and a raw-socket peer for the BusServer and BusClient tests. The server is the
// real one on a temporary socket; the methods are test methods registered with real handlers.

// MARK: - Test methods

/// `{"value": n, "text"?: "…"}`, echoed back by `test.echo`.
struct NumberParams: JSONConvertible, Hashable {
    var value: Int
    var text: String?

    init(value: Int, text: String? = nil) {
        self.value = value
        self.text = text
    }

    init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        value = try fields.int("value")
        text = try fields.optionalString("text")
    }

    var json: JSONValue {
        var members: [String: JSONValue] = ["value": .int(Int64(value))]
        if let text { members["text"] = .string(text) }
        return .object(members)
    }
}

/// `test.echo`: answers its params.
enum TestEcho: RPCMethod {
    typealias Params = NumberParams
    typealias Result = NumberParams
    static let name = "test.echo"
}

/// `test.wait`: waits (blocking the handler queue) until the test opens a gate or the request is cancelled.
enum TestWait: RPCMethod {
    typealias Params = NumberParams
    typealias Result = NumberParams
    static let name = "test.wait"
}

/// `test.append`: appends `value` to a log, in order per connection.
enum TestAppend: RPCMethod {
    typealias Params = NumberParams
    typealias Result = NumberParams
    static let name = "test.append"
}

/// `test.fail`: throws; `value` 0 an `RPCError` 404, otherwise a plain Swift error.
enum TestFail: RPCMethod {
    typealias Params = NumberParams
    typealias Result = EmptyObject
    static let name = "test.fail"
}

/// `test.flood`: sends `value` events of `text`'s length (or until refused), then answers how many went out.
enum TestFlood: RPCMethod {
    typealias Params = NumberParams
    typealias Result = NumberParams
    static let name = "test.flood"
}

/// `test.floodBatched`: like `test.flood`, with each event encoded here and queued with
/// `BusConnection.sendBatched(encodedEvent:method:)`.
enum TestFloodBatched: RPCMethod {
    typealias Params = NumberParams
    typealias Result = NumberParams
    static let name = "test.floodBatched"
}

/// `test.replay`: sends `value` events paced by the client's reading, then answers.
enum TestReplay: RPCMethod {
    typealias Params = NumberParams
    typealias Result = NumberParams
    static let name = "test.replay"
}

/// An event of the test methods: `{"value": n, "text"?: "…"}`.
struct TickEvent: RPCEventPayload, Hashable {
    static let method = "test.tick"
    var value: Int
    var text: String?

    init(value: Int, text: String? = nil) {
        self.value = value
        self.text = text
    }

    init(json: JSONValue) throws(RPCError) {
        let params = try NumberParams(json: json)
        value = params.value
        text = params.text
    }

    var json: JSONValue { NumberParams(value: value, text: text).json }
}

struct PlainFailure: Error {}

// MARK: - Synchronisation helpers

/// Runs a blocking wait on a thread of its own, so that an async test does not hold one of the few threads of
/// Swift's cooperative pool (which the test's own tasks need) while it waits.
func offPool<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
    await withLockedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// A gate that handlers wait on until the test opens it (bounded by `patience`).
final class Gate: Sendable {
    private let opened = Locked(false)
    private let semaphore = DispatchSemaphore(value: 0)

    func open() {
        let wasOpen = opened.withLock { isOpen -> Bool in
            defer { isOpen = true }
            return isOpen
        }
        if !wasOpen { semaphore.signal() }
    }

    var isOpen: Bool { opened.withLock { $0 } }

    /// Waits until opened; `false` after `patience`.
    @discardableResult
    func wait() -> Bool {
        guard semaphore.wait(timeout: .now() + patience) == .success else { return false }
        semaphore.signal()  // let every other waiter through too
        return true
    }
}

/// A counter with a bounded wait for a value.
final class Counter: Sendable {
    private let value = Locked(0)
    private let changed = DispatchSemaphore(value: 0)

    @discardableResult
    func increment() -> Int {
        let new = value.withLock { value -> Int in
            value += 1
            return value
        }
        changed.signal()
        return new
    }

    var current: Int { value.withLock { $0 } }

    /// Waits until the count reaches `target`; `false` after `patience`.
    func wait(for target: Int) -> Bool {
        let deadline = DispatchTime.now() + patience
        while current < target {
            if changed.wait(timeout: deadline) == .timedOut { return current >= target }
        }
        return true
    }
}

/// Records values from any thread.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    private let changed = DispatchSemaphore(value: 0)

    func append(_ value: Value) {
        values.withLock { $0.append(value) }
        changed.signal()
    }

    var all: [Value] { values.withLock { $0 } }

    /// Waits until at least `count` values were recorded; `false` after `patience`.
    func wait(forCount count: Int) -> Bool {
        wait { $0.count >= count }
    }

    /// Waits until the values recorded so far satisfy `condition`; `false` after `patience`.
    func wait(until condition: ([Value]) -> Bool) -> Bool {
        let deadline = DispatchTime.now() + patience
        while !condition(all) {
            if changed.wait(timeout: deadline) == .timedOut { return condition(all) }
        }
        return true
    }
}

// MARK: - Server fixture

/// A real `BusServer` on a socket in a temporary directory, with the test methods registered.
final class TestBus: Sendable {
    let directory: TemporaryDirectory
    let server: BusServer
    let socketPath: String
    /// Opened by the test to release `test.wait` handlers.
    let gate = Gate()
    /// `test.append` values in the order the handler ran, per connection id.
    let appended = Locked<[UInt64: [Int]]>([:])
    /// Handler errors reported to `onHandlerError`.
    let handlerErrors = Recorder<String>()
    /// `test.wait` requests that observed their cancellation.
    let cancellations = Counter()
    /// `test.wait` requests that started.
    let waitsStarted = Counter()

    init(directory: TemporaryDirectory? = nil, configure: (inout BusServer.Configuration) -> Void = { _ in }) throws {
        let directory = try directory ?? TemporaryDirectory()
        self.directory = directory
        socketPath = directory.path + "/bus.sock"
        var configuration = BusServer.Configuration(name: "testsvc", version: "1.2.3", socketPath: socketPath)
        configuration.socketActivation = nil
        let errors = handlerErrors
        configuration.onHandlerError = { method, error in errors.append("\(method): \(error)") }
        configure(&configuration)
        server = BusServer(configuration: configuration)
        registerHandlers()
        try server.start()
    }

    /// Starts a new server on the same socket path (after the previous one was shut down).
    func restarted(configure: (inout BusServer.Configuration) -> Void = { _ in }) throws -> TestBus {
        try TestBus(directory: directory, configure: configure)
    }

    func shutdown(gracefully: Bool = true) async {
        gate.open()
        await server.shutdown(gracefully: gracefully, timeout: .seconds(5))
    }

    private func registerHandlers() {
        server.register(TestEcho.self) { _, params in params }
        let gate = gate
        let cancellations = cancellations
        let waitsStarted = waitsStarted
        server.register(
            TestWait.self, cancellation: .immediate,
            responder: { request, params, responder in
                request.onCancel { cancellations.increment() }
                waitsStarted.increment()
                gate.wait()
                responder.succeed(params)
            })
        let appended = appended
        server.register(TestAppend.self, ordering: .inOrder) { request, params in
            // A short, varying pause: without the ordering, later requests would overtake earlier ones.
            try await Task.sleep(for: .microseconds(Int.random(in: 0...300)))
            appended.withLock { $0[request.connection.id, default: []].append(params.value) }
            return params
        }
        server.register(TestFail.self) { _, params in
            if params.value == 0 { throw RPCError.notFound("no such thing", data: .object(["id": .int(7)])) }
            throw PlainFailure()
        }
        server.register(TestFlood.self) { request, params in
            let text = params.text ?? ""
            var sent = 0
            while sent < params.value, request.connection.send(TickEvent(value: sent, text: text)) { sent += 1 }
            return NumberParams(value: sent)
        }
        server.register(TestFloodBatched.self) { request, params in
            var sent = 0
            while sent < params.value {
                let frame = try RPCEvent(TickEvent(value: sent, text: params.text ?? "")).encodeFrame(
                    encoder: FrameEncoder())
                guard request.connection.sendBatched(encodedEvent: frame, method: TickEvent.method) else { break }
                sent += 1
            }
            return NumberParams(value: sent)
        }
        server.register(TestReplay.self) { request, params in
            for index in 0..<params.value {
                try await request.connection.sendPaced(RPCEvent(TickEvent(value: index, text: params.text)))
            }
            return NumberParams(value: params.value)
        }
    }

    deinit {
        // Tests that do not shut their server down still release its loops and socket.
        let server = server
        Task.detached { await server.shutdown(gracefully: false, timeout: .zero) }
        directory.remove()
    }
}

// MARK: - Raw peer

/// A blocking client socket that writes and reads frames by hand: for hostile input and exact wire checks.
///
/// `@unchecked Sendable`: a test uses its peer from one thread at a time (handing it to `offPool` and waiting
/// for the result), so the read buffer is never touched concurrently.
final class RawBusPeer: @unchecked Sendable {
    let descriptor: Int32
    private var buffer: [UInt8] = []
    private var readIndex = 0

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SystemError(errno: errno, operation: "socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let error = SystemError(errno: errno, operation: "connect")
            Glibc.close(descriptor)
            throw error
        }
        // Reads give up after the test patience, so a missing answer fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        Glibc.close(descriptor)
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { bytes in
                retryingInterrupts { Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
            }
            if sent <= 0 { return }  // the server closed; reads will show it
            offset += sent
        }
    }

    func send(_ text: String) {
        write(frame(text))
    }

    /// Shuts down the writing side, as a one-shot client does after its requests (it still reads).
    func shutdownWriting() {
        shutdown(descriptor, Int32(SHUT_WR))
    }

    func sendHello(client: String = "raw") {
        send(#"{"jsonrpc":"2.0","id":"hello","method":"bus.hello","params":{"protocol":1,"client":"\#(client)"}}"#)
    }

    /// Says hello and checks the answer.
    func greet() -> Bool {
        sendHello()
        return readMessage()?["result"]?["server"] == .string("testsvc")
    }

    /// The next message, or `nil` at end of file (or when nothing came within the patience).
    func readMessage() -> JSONValue? {
        guard let header = readExactly(4) else { return nil }
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard let payload = readExactly(length) else { return nil }
        return try? JSONParser().parse(payload)
    }

    /// Reads messages until end of file.
    func readToEnd() -> [JSONValue] {
        var messages: [JSONValue] = []
        while let message = readMessage() { messages.append(message) }
        return messages
    }

    /// Whether the server has closed the connection (the next read is end of file, after any messages).
    func isClosedByServer() -> Bool {
        _ = readToEnd()
        return readExactly(1) == nil
    }

    private func readExactly(_ count: Int) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while buffer.count - readIndex < count {
            if readIndex > 0 {
                buffer.removeFirst(readIndex)
                readIndex = 0
            }
            let got = chunk.withUnsafeMutableBytes { bytes in
                retryingInterrupts { recv(descriptor, bytes.baseAddress, bytes.count, 0) }
            }
            if got <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<got])
        }
        let result = Array(buffer[readIndex..<(readIndex + count)])
        readIndex += count
        return result
    }
}

extension JSONValue {
    /// `error.code` of a response.
    var errorCode: Int64? { self["error"]?["code"]?.intValue }
}
