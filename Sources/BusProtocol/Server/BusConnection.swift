import ContextBusReactive
import ContextBusSupport
import ContextBusTransport
import ContextBusWire

/// One client's connection to a `BusServer`, as handlers see it: who the peer is, a way to send it events, and
/// hooks for when it goes away.
///
/// ```
///  client ──frames──▶ SocketConnection ──onRead (loop)──▶ BusConnection session ─┬─ bus.hello / ping / cancel: answered on the loop
///                                                                              └─ other methods ─▶ handler (task or handler queue)
///  handler ──Responder / return──▶ answer(…) ──encode──▶ SocketConnection.write (any thread, bounded queue)
///  service ──send(event:) / sendPaced──┘
/// ```
///
/// A connection is `Sendable`; every method may be called from any thread. Nothing here blocks on the peer:
/// writes go to a bounded outbound queue, and a peer that does not read until that queue is full is sent
/// `bus.overflow` (best effort) and dropped.
package final class BusConnection: Sendable, CustomStringConvertible {
    /// A number unique among this server's connections.
    package let id: UInt64
    /// The peer process, as the kernel reported it at connect time (`SO_PEERCRED`).
    package let peer: PeerCredentials
    /// Ends when the connection closes (its disposables are disposed on the handler queue): tie per-connection
    /// resources to it, e.g. `connection.lifetime += subscription`.
    package let lifetime: Lifetime

    let core: ServerCore
    let socket: SocketConnection
    /// Whether the access policy lets this peer in.
    let isAllowed: Bool
    let lane = OrderedLane()
    let state = Locked(State())
    /// Touched only on the connection's loop thread (uncontended).
    let session: Locked<Session>
    private let lifetimeToken: Lifetime.Token

    struct State {
        var isHelloDone = false
        var clientName: String?
        var inFlight: [RPCID: BusRequest] = [:]
        var closeReason: CloseReason?
        var closeActions: [@Sendable (CloseReason) -> Void] = []
        var writableWaiters: [@Sendable (Bool) -> Void] = []
        var idleWaiters: [@Sendable () -> Void] = []
        /// Answers taken out of `inFlight` whose frames are being written: the connection is not idle until they are.
        var answersBeingWritten = 0
        /// Messages refused by the socket after its queue overflowed, for `bus.overflow`'s `dropped`.
        var refusedMessages = 0
        var helloTimer: ScheduledWork?
    }

    struct Session {
        var decoder: FrameDecoder
        /// Set after a framing error or a refusal: nothing more is read.
        var isStopped = false
        /// A large frame is being parsed off the loop (`BusServer.Configuration.largeFrameThreshold`); reading is
        /// paused, and the frames decoded behind it wait in `waitingFrames`.
        var isParsingOffLoop = false
        /// Frames decoded behind the one being parsed off the loop, in order, and the framing error after them.
        var waitingFrames: [[UInt8]] = []
        var waitingFramingError: FrameError?
    }

    init(id: UInt64, peer: PeerCredentials, socket: SocketConnection, core: ServerCore) {
        self.id = id
        self.peer = peer
        self.socket = socket
        self.core = core
        isAllowed = core.configuration.access.allows(peer)
        session = Locked(Session(decoder: FrameDecoder(maximumLength: core.configuration.maxFrame)))
        (lifetime, lifetimeToken) = Lifetime.make()
    }

    package var description: String {
        let name = clientName.map { " \"\($0)\"" } ?? ""
        return "connection \(id)\(name) (\(peer))"
    }

    /// The name the client gave in `bus.hello`, once it has.
    package var clientName: String? { state.withLock { $0.clientName } }

    /// Whether the connection is still open and accepting messages.
    package var isOpen: Bool { state.withLock { $0.closeReason == nil } && socket.isOpen }

    /// The loop that serves the connection (reads, and sends what the socket did not take at once).
    package var loop: EventLoop { socket.loop }

    /// Requests received and not answered yet.
    package var inFlightCount: Int { state.withLock { $0.inFlight.count } }

    // MARK: - Events

    /// Sends an event to the client.
    ///
    /// - Returns: `false` when the event was not sent: the connection is closed or dropped for overflow, or
    ///   the event cannot be framed (reported to `onHandlerError`).
    @discardableResult
    package func send(event: RPCEvent) -> Bool {
        let frame: [UInt8]
        do {
            frame = try event.encodeFrame(encoder: core.frameEncoder)
        } catch {
            core.report(method: event.method, error: BusServerError.unencodableAnswer(error))
            return false
        }
        return write(frame)
    }

    /// Sends an event already encoded as a frame (length header included), e.g. one encoded once for many
    /// connections: the bytes are queued as they are, with no copy of the array's storage until the socket
    /// cannot take them at once.
    ///
    /// - Parameter method: the event's method, for the report when the frame is larger than `maxFrame`.
    /// - Returns: `false` when the event was not sent: the connection is closed or dropped for overflow, or the
    ///   frame is empty or larger than `maxFrame` (reported to `onHandlerError`).
    @discardableResult
    package func send(encodedEvent frame: [UInt8], method: String) -> Bool {
        guard isFramed(frame, method: method) else { return false }
        return write(frame)
    }

    /// Queues an event already encoded as a frame for the connection's loop to send, like
    /// `send(encodedEvent:method:)` but without a system call on the calling thread
    /// (`SocketConnection.writeBatched(_:)`): everything queued for the connection until its loop runs goes out
    /// in one write. For a producer fanning each event out to many connections, e.g. a store's change events:
    /// the sends are spread over the server's loops, and a connection that falls behind catches up with fewer,
    /// larger writes.
    ///
    /// It keeps the order with every other message sent on the connection, and the same outbound limit.
    ///
    /// - Returns: `false` when the event was not queued (see `send(encodedEvent:method:)`).
    @discardableResult
    package func sendBatched(encodedEvent frame: [UInt8], method: String) -> Bool {
        guard isFramed(frame, method: method) else { return false }
        return write(frame, batched: true)
    }

    /// Whether `frame` holds a payload within `maxFrame`; reports it when not.
    private func isFramed(_ frame: [UInt8], method: String) -> Bool {
        isFramed(payloadLength: frame.count - Frame.headerLength, method: method)
    }

    /// Whether a payload of `length` bytes is within `maxFrame` (and not empty); reports it when not.
    func isFramed(payloadLength length: Int, method: String) -> Bool {
        guard length > 0, length <= core.frameEncoder.maximumLength else {
            let error: FrameError =
                length > 0 ? .frameTooLarge(length: length, limit: core.frameEncoder.maximumLength) : .emptyFrame
            core.report(method: method, error: BusServerError.unencodableAnswer(.frame(error)))
            return false
        }
        return true
    }

    /// Sends a typed event (`ChangedEvent`, `StepEvent`, …) to the client.
    ///
    /// - Returns: `false` when the event was not sent (see `send(event:)`).
    @discardableResult
    package func send<Payload: RPCEventPayload>(_ payload: Payload) -> Bool {
        send(event: RPCEvent(payload))
    }

    // MARK: - Closing

    /// Runs `action` once when the connection closes (at once if it has), on the handler queue: drop the
    /// connection's subscriptions, cancel its chains. In-flight requests are cancelled before.
    package func onClose(_ action: @escaping @Sendable (CloseReason) -> Void) {
        let closed = state.withLock { state -> CloseReason? in
            if let reason = state.closeReason { return reason }
            state.closeActions.append(action)
            return nil
        }
        if let closed { core.handlerQueue.async { action(closed) } }
    }

    /// Closes the connection once what is already queued for it has been sent (or after a second).
    package func close() {
        socket.closeAfterFlushing()
    }

    // MARK: - Answers and writes

    /// Sends the one answer of `request` (later answers are dropped) and retires it.
    func answer(_ request: BusRequest, with outcome: Result<JSONValue, any Error>) {
        guard request.claimAnswer() else { return }
        let response: RPCResponse
        switch outcome {
        case .success(let result): response = RPCResponse(id: request.id, result: result)
        case .failure(let error): response = RPCResponse(id: request.id, error: core.rpcError(for: error, in: request))
        }
        send(answerTo: request) { () throws(MessageEncodingError) in
            try response.encodeFrame(encoder: core.frameEncoder)
        }
    }

    /// Sends the one answer of `request`, a result that writes its own JSON text, and retires it.
    func answer(_ request: BusRequest, writing result: some JSONWritable) {
        guard request.claimAnswer() else { return }
        send(answerTo: request) { () throws(MessageEncodingError) in
            try core.frameEncoder.encode { (output: inout [UInt8]) throws(JSONWriteError) in
                JSONWriter.appendLiteral(#"{"jsonrpc":"2.0","id":"#, into: &output)
                request.id.write(into: &output)
                JSONWriter.appendLiteral(#","result":"#, into: &output)
                try result.writeJSON(into: &output, writer: JSONWriter())
                output.append(UInt8(ascii: "}"))
            }
        }
    }

    /// Writes the frame `encode` makes for a claimed answer (an internal error if it cannot be encoded, which is
    /// reported), retiring the request first.
    private func send(answerTo request: BusRequest, encode: () throws(MessageEncodingError) -> [UInt8]) {
        let frame: [UInt8]
        do {
            frame = try encode()
        } catch {
            core.report(method: request.method, error: BusServerError.unencodableAnswer(error))
            frame = Self.frame(RPCResponse(id: request.id, error: .internalError()))
        }
        // The request leaves the in-flight table before its answer is written: a client may reuse the id as soon as
        // it reads the answer, and its next request must not find the id still taken.
        state.withLock { state in
            if state.inFlight[request.id] === request { state.inFlight[request.id] = nil }
            state.answersBeingWritten += 1
        }
        write(frame)
        answerWritten()
    }

    /// Counts an answer as written, waking idle waiters when nothing else is in flight or being written.
    private func answerWritten() {
        let idle = state.withLock { state -> [@Sendable () -> Void] in
            state.answersBeingWritten -= 1
            guard state.inFlight.isEmpty, state.answersBeingWritten == 0, !state.idleWaiters.isEmpty else { return [] }
            defer { state.idleWaiters = [] }
            return state.idleWaiters
        }
        for waiter in idle { waiter() }
    }

    /// Writes one frame (`batched`: from the loop, `SocketConnection.writeBatched(_:)`); a refused write is
    /// counted for `bus.overflow`.
    @discardableResult
    func write(_ frame: [UInt8], batched: Bool = false) -> Bool {
        if batched ? socket.writeBatched(frame) : socket.write(frame) { return true }
        countRefusedMessage()
        return false
    }

    /// Counts a message the socket refused, for `bus.overflow`'s `dropped`.
    func countRefusedMessage() {
        state.withLock { state in
            if state.closeReason == nil { state.refusedMessages += 1 }
        }
    }

    /// A frame of one of the server's own small messages (errors, `{}`), which always encode.
    static func frame(_ message: some RPCMessage) -> [UInt8] {
        (try? message.encodeFrame(encoder: FrameEncoder(maximumLength: Frame.largestEncodableLength))) ?? []
    }

    /// Calls `action` once no request is in flight (at once if none is, or the connection is closed).
    func whenIdle(_ action: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            if state.inFlight.isEmpty && state.answersBeingWritten == 0 || state.closeReason != nil { return true }
            state.idleWaiters.append(action)
            return false
        }
        if runNow { action() }
    }

    /// The connection's end, on its loop: cancels what is in flight, tells the hooks, leaves the server.
    func closed(_ reason: CloseReason) {
        let (requests, actions, writable, idle, timer) = state.withLock { state in
            state.closeReason = reason
            defer {
                state.inFlight = [:]
                state.closeActions = []
                state.writableWaiters = []
                state.idleWaiters = []
                state.helloTimer = nil
            }
            return (
                Array(state.inFlight.values), state.closeActions, state.writableWaiters, state.idleWaiters,
                state.helloTimer
            )
        }
        timer?.cancel()
        for request in requests { _ = request.cancel() }  // no answers: the peer is gone
        core.remove(self)
        let token = lifetimeToken
        core.handlerQueue.async {
            token.end()
            for action in actions { action(reason) }
            for waiter in writable { waiter(false) }
        }
        for waiter in idle { waiter() }
    }
}
