// What happens when the connection is lost: every waiting call has already failed (the session does that);
// here the client either reconnects with backoff or reaches its final `disconnected` state.

import ContextBusSupport

extension BusClient {
    /// A session ended; acts only if it is the client's current one.
    func sessionClosed(_ session: ClientSession, reason: String) {
        enum Next { case nothing, reconnect(ConnectionState, Duration), finish(ConnectionState) }
        let next = state.withLock { state -> Next in
            guard state.session === session else { return .nothing }
            state.session = nil
            guard !state.isClosed else { return .nothing }
            if let policy = options.reconnect, policy.allows(attempt: 1) {
                state.connectionState = .reconnecting(attempt: 1, lastError: reason)
                return .reconnect(state.connectionState, policy.delay(beforeAttempt: 1))
            }
            state.connectionState = .disconnected(reason: reason)
            return .finish(state.connectionState)
        }
        switch next {
        case .nothing:
            return
        case .reconnect(let newState, let delay):
            publish(newState)
            scheduleReconnect(attempt: 1, after: delay)
        case .finish(let newState):
            publish(newState)
            eventObservers.complete()
        }
    }

    private func scheduleReconnect(attempt: Int, after delay: Duration) {
        let timer = loop.schedule(after: delay) { [weak self] in self?.reconnect(attempt: attempt) }
        let isWanted = state.withLock { state -> Bool in
            guard !state.isClosed else { return false }
            state.reconnectTimer = timer
            return true
        }
        if !isWanted { timer.cancel() }
    }

    /// One attempt, on the loop: connect, `bus.hello`, install; or schedule the next attempt.
    private func reconnect(attempt: Int) {
        guard !state.withLock({ $0.isClosed }) else { return }
        let weakSelf = Locked(WeakClient(client: self))
        let path = socketPath
        Self.openSession(
            address: address, clientName: clientName, options: options, loop: loop,
            onEvent: { event in weakSelf.withLock { $0.client }?.eventObservers.send(event) },
            onClose: { session, reason in weakSelf.withLock { $0.client }?.sessionClosed(session, reason: reason) }
        ) { [weak self] result in
            guard let self else {
                if case .success(let (session, _)) = result { session.close(with: .closed(path: path)) }
                return
            }
            switch result {
            case .success(let (session, hello)):
                install(session, hello: hello, isReconnect: true)
            case .failure(let error):
                failedAttempt(attempt, error: error)
            }
        }
    }

    private func failedAttempt(_ attempt: Int, error: BusClientError) {
        guard let policy = options.reconnect else { return }
        let next = attempt + 1
        let (newState, held) = state.withLock { state -> (ConnectionState?, [HeldCall]) in
            guard !state.isClosed, state.session == nil else { return (nil, []) }
            if policy.allows(attempt: next) {
                state.connectionState = .reconnecting(attempt: next, lastError: error.description)
                return (state.connectionState, [])
            }
            state.connectionState = .disconnected(
                reason: "gave up reconnecting after \(attempt) attempts; the last failed: \(error)")
            defer { state.heldCalls = [] }
            return (state.connectionState, state.heldCalls)
        }
        guard let newState else { return }
        for call in held { call.fail(BusClientError.notConnected(path: socketPath)) }
        publish(newState)
        if newState.isFinal {
            eventObservers.complete()
        } else {
            scheduleReconnect(attempt: next, after: policy.delay(beforeAttempt: next))
        }
    }
}
