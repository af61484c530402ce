import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Dispatch

// The session rules of docs/protocol.md ("Transport and framing", "Messages", "Session"), applied on the
// connection's loop thread: framing, the access check, the `bus.hello` gate, the session methods, and the hand-off
// of every other request to its handler.

extension BusConnection {
    /// Starts reading; called once, on the connection's loop, right after accepting.
    func start() {
        socket.start(
            SocketConnection.Handlers(
                onRead: { [self] bytes in received(bytes) },
                onOverflow: { [self] overflow in overflowed(overflow) },
                onDrain: { [self] in releaseWritableWaiters(isOpen: true) },
                onClose: { [self] reason in closed(reason) },
                onEndOfInput: { [self] in inputEnded() }))
        if let timeout = core.configuration.helloTimeout {
            let timer = socket.loop.schedule(after: timeout) { [self] in
                if !state.withLock({ $0.isHelloDone }) { socket.close() }
            }
            state.withLock { $0.helloTimer = timer }
        }
    }

    /// The peer shut down its writing side: a one-shot client (`socat`, `nc -N`, a script) that sends its requests,
    /// then `shutdown(SHUT_WR)`, then reads the answers. Every request read is answered, then the connection closes;
    /// a partial frame left in the decoder is dropped (its rest can never come).
    private func inputEnded() {
        session.withLock { $0.isStopped = true }
        // The peer is waiting to read: give a large answer time to drain, but not forever.
        whenIdle { [self] in socket.closeAfterFlushing(timeout: .seconds(10)) }
    }

    // MARK: - Frames

    private func received(_ bytes: [UInt8]) {
        let (frames, framingError) = session.withLock { session -> ([[UInt8]], FrameError?) in
            guard !session.isStopped else { return ([], nil) }
            session.decoder.append(bytes)
            var frames: [[UInt8]] = []
            var framingError: FrameError?
            do throws(FrameError) {
                while let frame = try session.decoder.nextFrame() { frames.append(frame) }
            } catch {
                session.isStopped = true
                framingError = error
            }
            // Read while paused (the peer hung up): it waits behind the frame being parsed off the loop.
            guard !session.isParsingOffLoop else {
                session.waitingFrames += frames
                if let framingError { session.waitingFramingError = framingError }
                return ([], nil)
            }
            return (frames, framingError)
        }
        processFrames(frames[...], then: framingError)
    }

    /// Handles `frames` in order, then answers `framingError`. A large frame is parsed off the loop: reading
    /// pauses, and the frames behind it wait until its message has been handled (`parsedOffLoop`).
    private func processFrames(_ frames: ArraySlice<[UInt8]>, then framingError: FrameError?) {
        var rest = frames
        while let frame = rest.popFirst() {
            if frame.count >= core.configuration.largeFrameThreshold {
                session.withLock { session in
                    session.isParsingOffLoop = true
                    session.waitingFrames = Array(rest)
                    session.waitingFramingError = framingError
                }
                socket.pauseReading()
                parseOffLoop(frame)
                return
            }
            // Frames completed before a bad header are still processed, as the decoder returns them first.
            guard process(IncomingMessage(payload: frame, from: .client)) else { return }
        }
        if let framingError {
            // docs/protocol.md: one error with id null, code -32600, then close; nothing else is processed.
            socket.closeAfterFlushing(Self.frame(RPCResponse(id: nil, error: RPCError(framing: framingError))))
        }
    }

    /// Parses a large frame on a thread of the global pool, then handles its message back on the loop.
    private func parseOffLoop(_ frame: [UInt8]) {
        let hook = core.configuration.largeFrameParseHook
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            hook?(frame.count)
            let message = IncomingMessage(payload: frame, from: .client)
            socket.loop.execute { [self] in parsedOffLoop(message) }
        }
    }

    /// On the loop, with the message of a frame parsed off it: handles it, then the frames that waited behind it,
    /// and reads again unless another large frame among them is now being parsed.
    private func parsedOffLoop(_ message: IncomingMessage) {
        let (frames, framingError) = session.withLock { session -> ([[UInt8]], FrameError?) in
            defer {
                session.isParsingOffLoop = false
                session.waitingFrames = []
                session.waitingFramingError = nil
            }
            return (session.waitingFrames, session.waitingFramingError)
        }
        guard process(message) else { return }
        processFrames(frames[...], then: framingError)
        if !session.withLock({ $0.isParsingOffLoop }) { socket.resumeReading() }
    }

    /// Handles one message; `false` when the connection is being dropped and nothing more may be processed.
    private func process(_ message: IncomingMessage) -> Bool {
        guard isAllowed else {
            refuse(answering: message)
            return false
        }
        switch message {
        case .invalid(let response):
            write(Self.frame(response))
        case .response:
            break  // never produced for a client's messages
        case .request(let request):
            // JSON-RPC: a notification gets no response, and clients have nothing to notify the server of.
            if let id = request.id { handle(request, id: id) }
        }
        return true
    }

    /// 403 for a peer the access policy does not allow, then close.
    private func refuse(answering message: IncomingMessage) {
        session.withLock { $0.isStopped = true }
        core.refusedPeers.add(1, ordering: .relaxed)
        let id: RPCID?
        switch message {
        case .request(let request): id = request.id
        case .invalid(let response), .response(let response): id = response.id
        }
        let error = RPCError.forbidden(
            "uid \(peer.uid) gid \(peer.gid) is not allowed to use \(core.configuration.name)")
        socket.closeAfterFlushing(Self.frame(RPCResponse(id: id, error: error)))
    }

    // MARK: - Requests

    private func handle(_ request: RPCRequest, id: RPCID) {
        let isHelloDone = state.withLock { $0.isHelloDone }
        switch request.method {
        case BusHello.name: hello(request, id: id)
        case _ where !isHelloDone: reply(to: id, with: .failure(.helloRequired(method: request.method)))
        case BusPing.name: reply(to: id, with: .success(.object([:])))
        case BusCancel.name: cancel(request, id: id)
        default: dispatch(request, id: id)
        }
    }

    private func reply(to id: RPCID, with outcome: Result<JSONValue, RPCError>) {
        write(Self.frame(RPCResponse(id: id, outcome: outcome)))
    }

    private func hello(_ request: RPCRequest, id: RPCID) {
        let params: HelloParams
        do {
            params = try request.params(for: BusHello.self)
        } catch {
            reply(to: id, with: .failure(error))
            return
        }
        guard params.protocolVersion == BusProtocolVersion.current else {
            let message =
                "protocol \(params.protocolVersion) is not spoken here; this server speaks protocol "
                + "\(BusProtocolVersion.current)"
            reply(to: id, with: .failure(.invalidParams(field: "protocol", message: message)))
            return
        }
        let timer = state.withLock { state -> ScheduledWork? in
            state.isHelloDone = true
            state.clientName = params.client
            defer { state.helloTimer = nil }
            return state.helloTimer
        }
        timer?.cancel()
        reply(to: id, with: .success(core.helloResult(for: peer).json))
    }

    private func cancel(_ request: RPCRequest, id: RPCID) {
        let params: CancelParams
        do {
            params = try request.params(for: BusCancel.self)
        } catch {
            reply(to: id, with: .failure(error))
            return
        }
        let target = state.withLock { $0.inFlight[params.request] }
        if let target, target.cancel() { answer(target, with: .failure(RPCError.cancelled())) }
        reply(to: id, with: .success(.object([:])))
    }

    private func dispatch(_ request: RPCRequest, id: RPCID) {
        guard let handler = core.handler(for: request.method) else {
            reply(to: id, with: .failure(.methodNotFound(request.method)))
            return
        }
        guard !core.isDraining else {
            reply(to: id, with: .failure(.unavailable("\(core.configuration.name) is shutting down")))
            return
        }
        if let refusal = core.configuration.requestPrecondition?(request.method, request.params) {
            reply(to: id, with: .failure(refusal))
            return
        }
        let busRequest = BusRequest(
            id: id, method: request.method, connection: self, cancellationMode: handler.cancellation)
        let limit = core.configuration.maxInFlight
        let refusal = state.withLock { state -> RPCError?? in
            if state.closeReason != nil { return .some(nil) }
            if state.inFlight[id] != nil { return .invalidRequest("request id \(id) is already in flight") }
            if state.inFlight.count >= limit { return .tooManyRequests(limit: limit) }
            state.inFlight[id] = busRequest
            return nil
        }
        switch refusal {
        case .some(.some(let error)):
            reply(to: id, with: .failure(error))
            return
        case .some(.none):
            return  // closed meanwhile
        case .none:
            break
        }
        let params = request.params
        switch handler.ordering {
        case .concurrent:
            handler.start(busRequest, params, {})
        case .inOrder:
            lane.enqueue { finished in handler.start(busRequest, params, finished) }
        }
    }

    // MARK: - Overflow

    /// The outbound queue overflowed: say goodbye with `bus.overflow` (best effort) and close.
    private func overflowed(_ overflow: OutboundOverflow) {
        session.withLock { $0.isStopped = true }
        core.overflowDrops.add(1, ordering: .relaxed)
        let dropped = state.withLock { max(1, $0.refusedMessages) }
        socket.closeAfterFlushing(
            Self.frame(RPCEvent(OverflowEvent(dropped: dropped))), timeout: core.configuration.overflowGoodbyeTimeout)
    }
}
