// Flow control for long sends: docs/protocol.md "A `since` replay is paced by what the client reads, so a subscriber
// that keeps reading is never dropped for a long replay". A paced sender writes only while the outbound queue
// holds less than the pacing threshold (a quarter of `maxOutbound` by default) and otherwise waits until the
// socket has drained it, which happens exactly as fast as the client reads.

import ContextBusSupport
import ContextBusWire

extension BusConnection {
    /// Why a paced send stopped.
    package enum PacedSendError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The connection closed (or was dropped) before the event could be sent.
        case closed

        package var description: String { "the connection closed before the event could be sent" }
    }

    /// Whether the outbound queue is below the pacing threshold, so a paced sender may write now.
    package var hasOutboundRoom: Bool {
        socket.outboundByteCount < core.configuration.effectivePacingThreshold
    }

    /// Calls `action` once the outbound queue is below the pacing threshold (soon if it already is), on the
    /// handler queue; `isOpen` is `false` when the connection closed first.
    package func whenWritable(_ action: @escaping @Sendable (_ isOpen: Bool) -> Void) {
        let isClosed = state.withLock { state -> Bool in
            if state.closeReason != nil { return true }
            state.writableWaiters.append(action)
            return false
        }
        if isClosed {
            core.handlerQueue.async { action(false) }
            return
        }
        // Checked after registering: a drain between a caller's check and the registration is not lost.
        if hasOutboundRoom { releaseWritableWaiters(isOpen: true) }
    }

    /// Sends `event` once the outbound queue has room, waiting for the client to read if it has not.
    ///
    /// ```swift
    /// for transaction in history.transactions(after: since) {
    ///     try await connection.sendPaced(RPCEvent(changedEvent(for: transaction)))
    /// }
    /// ```
    ///
    /// - Throws: `PacedSendError.closed` when the connection closed first.
    package func sendPaced(_ event: RPCEvent) async throws(PacedSendError) {
        while !hasOutboundRoom {
            let isOpen = await withLockedContinuation { continuation in
                whenWritable { continuation.resume(returning: $0) }
            }
            guard isOpen else { throw .closed }
        }
        guard send(event: event) else { throw .closed }
    }

    /// Sends the events `next` produces, pacing them by what the client reads, until `next` returns `nil`.
    ///
    /// `next` and `completion` run on the handler queue, one call at a time. `completion(true)` follows the last
    /// event; `completion(false)` means the connection closed first (and `next` is not called again).
    ///
    /// ```swift
    /// var cursor = history.cursor(after: since)
    /// connection.sendPaced(from: { cursor.nextEvent() }) { finished in if finished { subscription.goLive() } }
    /// ```
    package func sendPaced(
        from next: @escaping @Sendable () -> RPCEvent?, completion: @escaping @Sendable (_ finished: Bool) -> Void
    ) {
        core.handlerQueue.async { [self] in pump(next, completion) }
    }

    private func pump(
        _ next: @escaping @Sendable () -> RPCEvent?, _ completion: @escaping @Sendable (Bool) -> Void
    ) {
        while hasOutboundRoom {
            guard let event = next() else {
                completion(true)
                return
            }
            guard send(event: event) else {
                completion(false)
                return
            }
        }
        whenWritable { [self] isOpen in
            if isOpen { pump(next, completion) } else { completion(false) }
        }
    }

    /// Hands the waiting paced senders to the handler queue.
    func releaseWritableWaiters(isOpen: Bool) {
        let waiters = state.withLock { state -> [@Sendable (Bool) -> Void] in
            defer { state.writableWaiters = [] }
            return state.writableWaiters
        }
        guard !waiters.isEmpty else { return }
        core.handlerQueue.async {
            for waiter in waiters { waiter(isOpen) }
        }
    }
}
