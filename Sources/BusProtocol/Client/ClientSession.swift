import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Synchronization

/// One connection of a `BusClient`: the socket, the frame decoder and the table of calls waiting for answers.
///
/// A client makes a new session for every (re)connection. Answers are matched to calls by id, in whatever order
/// they come; every call is completed exactly once: by its answer, its timeout, its cancellation or the end of
/// the session.
final class ClientSession: Sendable {
    typealias Completion = @Sendable (Result<JSONValue, any Error>) -> Void

    let socket: SocketConnection
    let path: String
    private let encoder: FrameEncoder
    private let nextID = Atomic<Int64>(1)
    private let state = Locked(State())
    /// Touched only on the loop thread.
    private let decoder: Locked<FrameDecoder>
    private let onEvent: @Sendable (RPCEvent) -> Void
    private let onClose: @Sendable (ClientSession, _ reason: String) -> Void

    private struct Pending {
        var method: String
        var completion: Completion
        var timer: ScheduledWork?
    }

    private struct State {
        var pending: [Int64: Pending] = [:]
        /// Set when the session ends: what later and pending calls fail with.
        var failure: BusClientError?
        /// Set by `close(with:)` before the socket closes, so the end is reported with it.
        var requestedFailure: BusClientError?
    }

    init(
        socket: SocketConnection, path: String, maxFrame: Int,
        onEvent: @escaping @Sendable (RPCEvent) -> Void,
        onClose: @escaping @Sendable (ClientSession, _ reason: String) -> Void
    ) {
        self.socket = socket
        self.path = path
        encoder = FrameEncoder(maximumLength: maxFrame)
        decoder = Locked(FrameDecoder(maximumLength: maxFrame))
        self.onEvent = onEvent
        self.onClose = onClose
    }

    /// Starts reading.
    func start() {
        socket.start(
            SocketConnection.Handlers(
                onRead: { [self] bytes in received(bytes) },
                onOverflow: { [self] _ in
                    close(with: .disconnected(path: path, reason: "the service stopped reading our requests"))
                },
                onClose: { [self] reason in closed(reason) }))
    }

    /// Why the session ended, once it has.
    var failure: BusClientError? { state.withLock { $0.failure } }

    /// Calls waiting for an answer.
    var pendingCount: Int { state.withLock { $0.pending.count } }

    func makeID() -> Int64 {
        nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: - Calls

    /// Sends a request; `completion` is called exactly once, possibly before this returns.
    func send(
        id: Int64, method: String, params: JSONValue?, timeout: Duration?, completion: @escaping Completion
    ) {
        let frame: [UInt8]
        do {
            frame = try RPCRequest(id: .number(id), method: method, params: params).encodeFrame(encoder: encoder)
        } catch {
            completion(.failure(BusClientError.unencodableRequest(method: method, error)))
            return
        }
        let refusal = state.withLock { state -> BusClientError? in
            if let failure = state.failure { return failure }
            state.pending[id] = Pending(method: method, completion: completion)
            return nil
        }
        if let refusal {
            completion(.failure(refusal))
            return
        }
        if let timeout {
            let timer = socket.loop.schedule(after: timeout) { [self] in
                finish(id, with: .failure(BusClientError.timedOut(method: method, after: timeout)), sendCancel: true)
            }
            state.withLock { $0.pending[id]?.timer = timer }
        }
        if !socket.write(frame) {
            let failure = state.withLock { $0.failure ?? $0.requestedFailure }
            finish(id, with: .failure(failure ?? .disconnected(path: path, reason: "the connection is closed")))
        }
    }

    /// Completes call `id` with `outcome` if it is still waiting; with `sendCancel`, tells the service too.
    ///
    /// - Returns: whether the call was still waiting.
    @discardableResult
    func finish(_ id: Int64, with outcome: Result<JSONValue, any Error>, sendCancel: Bool = false) -> Bool {
        guard let pending = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return false }
        pending.timer?.cancel()
        if sendCancel {
            let cancel = RPCRequest(id: .number(makeID()), BusCancel.self, params: CancelParams(request: .number(id)))
            if let frame = try? cancel.encodeFrame(encoder: encoder) { socket.write(frame) }
        }
        pending.completion(outcome)
        return true
    }

    /// Ends the session: pending calls fail with `failure`.
    func close(with failure: BusClientError) {
        state.withLock { state in
            if state.requestedFailure == nil { state.requestedFailure = failure }
        }
        socket.close()
    }

    // MARK: - Loop side

    private func received(_ bytes: [UInt8]) {
        let (frames, framingError) = decoder.withLock { decoder -> ([[UInt8]], FrameError?) in
            decoder.append(bytes)
            var frames: [[UInt8]] = []
            do throws(FrameError) {
                while let frame = try decoder.nextFrame() { frames.append(frame) }
                return (frames, nil)
            } catch {
                return (frames, error)
            }
        }
        for frame in frames {
            switch IncomingMessage(payload: frame, from: .server) {
            case .response(let response):
                // An error with id null is about a message of ours the service could not read; nothing to match.
                guard case .number(let id)? = response.id else { continue }
                finish(id, with: response.outcome.mapError { $0 })
            case .request(let request):
                if let event = IncomingMessage.request(request).event { onEvent(event) }
            case .invalid:
                continue  // not a valid response or event: a broken service; nothing to match it to
            }
        }
        if let framingError {
            close(with: .disconnected(path: path, reason: "the service broke the framing: \(framingError)"))
        }
    }

    private func closed(_ reason: CloseReason) {
        let reasonText: String
        switch reason {
        case .endOfFile: reasonText = "the service closed the connection"
        case .localClose, .loopShutdown, .error: reasonText = reason.description
        }
        let (pending, failure) = state.withLock { state -> ([Pending], BusClientError) in
            let failure = state.requestedFailure ?? .disconnected(path: path, reason: reasonText)
            state.failure = failure
            defer { state.pending = [:] }
            return (Array(state.pending.values), failure)
        }
        for call in pending {
            call.timer?.cancel()
            call.completion(.failure(failure))
        }
        let description: String
        if case .disconnected(_, let why) = failure { description = why } else { description = failure.description }
        onClose(self, description)
    }
}
