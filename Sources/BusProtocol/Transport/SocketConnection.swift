import ContextBusSupport

/// A non-blocking Unix-domain stream connection served by one event loop.
///
/// Bytes read are handed to `Handlers.onRead` on the loop thread. `write(_:)` may be called from any thread; each
/// write is atomic with respect to the others (its bytes are never interleaved with another write's) and writes
/// from one thread go out in order. Bytes the socket does not take at once wait in a bounded outbound queue and are
/// sent when epoll reports the socket writable.
///
/// ```
///  owner ──start(handlers)──▶ SocketConnection ──registration──▶ EventLoop (epoll)
///    ▲                         │  state (Locked): phase, outbound queue, handlers, registration
///    └── onRead/onDrain/onOverflow/onClose (on the loop thread) ◀──┘
/// ```
///
/// While registered, the loop keeps the connection alive; after it closes, the connection drops its handlers (and
/// so any reference cycle through them). The descriptor is closed exactly once, on the loop thread, after it left
/// epoll.
package final class SocketConnection: Sendable, CustomStringConvertible {
    /// Limits of one connection.
    package struct Options: Hashable, Sendable {
        /// The most bytes the outbound queue may hold; a write that would pass it is refused (default 8 MiB, the
        /// protocol's `--max-outbound` default).
        package var maxOutboundBytes: Int
        /// Reads per readiness event before the loop moves on to other connections (level-triggered epoll calls
        /// again if more is waiting).
        package var maxReadsPerWakeup: Int

        package init(maxOutboundBytes: Int = 8 * 1024 * 1024, maxReadsPerWakeup: Int = 4) {
            precondition(maxOutboundBytes > 0 && maxReadsPerWakeup > 0, "connection limits must be positive")
            self.maxOutboundBytes = maxOutboundBytes
            self.maxReadsPerWakeup = maxReadsPerWakeup
        }
    }

    /// The owner's callbacks, all called on the connection's loop thread, never while a lock is held.
    package struct Handlers: Sendable {
        /// Bytes read from the peer, in order; each call gets a fresh array of at most
        /// `EventLoop.readBufferSize` bytes.
        package var onRead: @Sendable ([UInt8]) -> Void
        /// A write was refused because the outbound queue is full; called once. No write is accepted afterwards,
        /// so the peer sees a prefix of what was written, never a stream with a hole in it.
        package var onOverflow: @Sendable (OutboundOverflow) -> Void
        /// The outbound queue, after having held bytes, has been sent completely (to pace a producer).
        package var onDrain: @Sendable () -> Void
        /// The connection closed; called exactly once (if `start` was called), and nothing is called after it.
        package var onClose: @Sendable (CloseReason) -> Void
        /// The peer shut down its writing side (`shutdown(SHUT_WR)`: end of file, but the peer still reads). With
        /// this handler the connection stays open for writing, reads nothing more, and closes with `.endOfFile`
        /// when the peer closes entirely; the handler's owner closes it when it has answered (e.g.
        /// `closeAfterFlushing`). Without it (`nil`, the default) end of file closes the connection at once.
        package var onEndOfInput: (@Sendable () -> Void)?

        package init(
            onRead: @escaping @Sendable ([UInt8]) -> Void,
            onOverflow: @escaping @Sendable (OutboundOverflow) -> Void = { _ in },
            onDrain: @escaping @Sendable () -> Void = {},
            onClose: @escaping @Sendable (CloseReason) -> Void = { _ in },
            onEndOfInput: (@Sendable () -> Void)? = nil
        ) {
            self.onRead = onRead
            self.onOverflow = onOverflow
            self.onDrain = onDrain
            self.onClose = onClose
            self.onEndOfInput = onEndOfInput
        }
    }

    /// The loop that reads, flushes and calls the handlers.
    package let loop: EventLoop
    /// The limits this connection was made with.
    package let options: Options
    let descriptor: FileDescriptor
    let state: Locked<State>

    enum Phase: Equatable {
        /// Reading (once started) and accepting writes.
        case open
        /// `closeAfterFlushing`: no reads and no new writes; closes when the queue is empty or time is up.
        case draining
        /// Closing or closed; the reason is final.
        case closed(CloseReason)
    }

    struct State {
        var phase = Phase.open
        var handlers: Handlers?
        var isStarted = false
        var registration: IORegistration?
        var interest: IOInterest = []
        var outbound = OutboundBuffer()
        var hasOverflowed = false
        /// A `flush()` for `writeBatched(_:)` is submitted to the loop and has not started.
        var isFlushScheduled = false
        var drainDeadline: ScheduledWork?
        /// Set by the `finishClose` that closes the descriptor (once; `onClose` may come from a later run).
        var isFinished = false
        /// `pauseReading()`: epoll does not watch for readability, and nothing is read until `resumeReading()`.
        var isReadingPaused = false
        /// The peer shut down its writing side and `onEndOfInput` took it: nothing more is read.
        var isInputClosed = false

        var isClosed: Bool {
            if case .closed = phase { return true }
            return false
        }
    }

    /// Wraps a connected, non-blocking stream socket (accepted, connected, or one end of
    /// `FileDescriptor.makeSocketPair()`). Nothing is read until `start(_:)`.
    ///
    /// - Parameters:
    ///   - descriptor: The socket; the connection takes ownership and closes it.
    ///   - loop: The loop that will serve it.
    ///   - options: Limits.
    package init(adopting descriptor: FileDescriptor, on loop: EventLoop, options: Options = Options()) {
        self.descriptor = descriptor
        self.loop = loop
        self.options = options
        state = Locked(State())
    }

    package var description: String { "SocketConnection(\(descriptor))" }

    /// Whether the connection still accepts writes (not closing, not overflowed).
    package var isOpen: Bool { state.withLock { $0.phase == .open && !$0.hasOverflowed } }

    /// Bytes waiting in the outbound queue.
    package var outboundByteCount: Int { state.withLock { $0.outbound.count } }

    /// The credentials of the peer process (`SO_PEERCRED`).
    ///
    /// - Throws: `SystemError` (`EBADF`) once the connection is closed.
    package func peerCredentials() throws -> PeerCredentials {
        try state.withLock { state throws(SystemError) -> PeerCredentials in
            if state.isFinished { throw SystemError.closedDescriptor("getsockopt(SO_PEERCRED)") }
            return try Syscall.peerCredentials(descriptor.rawValue)
        }
    }

    // MARK: - Start

    /// Installs the handlers and starts reading; call once. Callable from any thread.
    ///
    /// If the connection closed before it was started, `onClose` is called (on the loop) right away.
    package func start(_ handlers: Handlers) {
        let closedReason = state.withLock { state -> CloseReason? in
            precondition(!state.isStarted, "SocketConnection.start(_:) called twice")
            state.isStarted = true
            state.handlers = handlers
            if case .closed(let reason) = state.phase { return reason }
            do {
                let interest = desiredInterest(state)
                state.registration = try loop.register(
                    descriptor, for: interest,
                    onReady: { [self] readiness in handle(readiness) },
                    onLoopShutdown: { [self] in closeNow(.loopShutdown) })
                state.interest = interest
                return nil
            } catch let error as SystemError {
                _ = beginClose(&state, .error(error))
                return .error(error)
            } catch {
                _ = beginClose(&state, .loopShutdown)
                return .loopShutdown
            }
        }
        if closedReason != nil { scheduleFinishClose() }
    }

    // MARK: - Close

    /// Closes now, discarding anything still queued; `onClose(.localClose)` follows on the loop. Callable from any
    /// thread, any number of times.
    package func close() {
        if state.withLock({ beginClose(&$0, .localClose) }) { scheduleFinishClose() }
    }

    /// Stops reading and accepting writes, queues `finalBytes` (even past the outbound limit: this is how the
    /// `bus.overflow` goodbye is sent best effort), and closes once the queue is sent or `timeout` has passed.
    ///
    /// - Parameters:
    ///   - finalBytes: Last bytes for the peer, e.g. one encoded frame; may be empty.
    ///   - timeout: How long a peer that does not read may hold the connection open.
    package func closeAfterFlushing(_ finalBytes: [UInt8] = [], timeout: Duration = .seconds(1)) {
        let mustFinish = state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            state.phase = .draining
            guard enqueue(finalBytes, into: &state) else { return true }  // failed: beginClose ran
            if state.outbound.isEmpty { return beginClose(&state, .localClose) }
            guard updateInterest(&state) else { return true }
            state.drainDeadline = loop.schedule(after: timeout) { [self] in closeNow(.localClose) }
            return false
        }
        if mustFinish { scheduleFinishClose() }
    }

    /// Marks the connection closed with `reason` unless it already is; `true` when the caller must then arrange
    /// `finishClose()`. Writes and reads stop at once; the descriptor stays open until `finishClose`.
    func beginClose(_ state: inout State, _ reason: CloseReason) -> Bool {
        if state.isClosed { return false }
        state.phase = .closed(reason)
        state.outbound.removeAll()
        state.drainDeadline?.cancel()
        state.drainDeadline = nil
        return true
    }

    /// Closes with `reason` from the loop thread (or a stopped loop), finishing at once.
    func closeNow(_ reason: CloseReason) {
        if state.withLock({ beginClose(&$0, reason) }) { finishClose() }
    }

    /// Arranges `finishClose()` on the loop; call without holding the lock.
    func scheduleFinishClose() {
        // On the loop as well, so that a handler calling close() is not re-entered by onClose.
        if !loop.submit({ [self] in finishClose() }) { finishClose() }
    }

    /// Leaves epoll, closes the descriptor (under the lock, so no write or `peerCredentials` can use a reused
    /// number) and tells the owner. The descriptor is closed once; `onClose` is called once, by the first run
    /// that finds handlers: a connection closed before `start` is finished by the close's run, and told by the run
    /// `start` schedules, whichever order the two come in.
    func finishClose() {
        let delivery = state.withLock { state -> (Handlers, CloseReason)? in
            guard case .closed(let reason) = state.phase else { return nil }
            if !state.isFinished {
                state.isFinished = true
                state.registration?.cancel()
                state.registration = nil
                descriptor.close()
            }
            defer { state.handlers = nil }
            return state.handlers.map { ($0, reason) }
        }
        if let (handlers, reason) = delivery { handlers.onClose(reason) }
    }

    // MARK: - Interest

    func desiredInterest(_ state: State) -> IOInterest {
        switch state.phase {
        case .open:
            let reading: IOInterest = state.isReadingPaused || state.isInputClosed ? [] : [.readable]
            return state.outbound.isEmpty ? reading : reading.union(.writable)
        case .draining: return state.outbound.isEmpty ? [] : [.writable]
        case .closed: return []
        }
    }

    /// Brings epoll's interest in line with the state (`epoll_ctl` is safe from any thread).
    ///
    /// - Returns: `false` when `epoll_ctl` failed and the connection began closing: the caller must then call
    ///   `scheduleFinishClose()` once it has released the lock.
    func updateInterest(_ state: inout State) -> Bool {
        guard let registration = state.registration else { return true }
        let interest = desiredInterest(state)
        guard interest != state.interest else { return true }
        do {
            try registration.setInterest(interest)
            state.interest = interest
            return true
        } catch {
            return !beginClose(&state, .error(error as? SystemError ?? .closedDescriptor("epoll_ctl")))
        }
    }
}
