// Reading, writing and flushing of `SocketConnection`.

extension SocketConnection {
    // MARK: - Writing

    /// Sends `bytes` after everything written before; callable from any thread.
    ///
    /// When the outbound queue is empty the bytes go straight to the socket from the calling thread (under the
    /// connection's lock, which also keeps the descriptor open); what the socket does not take is queued and sent
    /// by the loop when epoll reports the socket writable. A write is all or nothing: if queueing it would pass
    /// `Options.maxOutboundBytes` even after the socket has taken what it can of the queue, nothing of it is sent,
    /// `write` returns `false`, and `onOverflow` is called once on the loop; from then on every write is refused.
    ///
    /// - Returns: `true` when the bytes were sent or queued; `false` after close or overflow.
    @discardableResult
    package func write(_ bytes: [UInt8]) -> Bool {
        write(bytes, sendingNow: true)
    }

    /// Queues `bytes` after everything written before for the loop to send; callable from any thread.
    ///
    /// Unlike `write(_:)` this never calls into the kernel on the calling thread: the bytes join the outbound queue
    /// and the connection's loop sends the whole queue with one `send` when it next runs its tasks. Bytes queued by
    /// several calls before then (e.g. one event per transaction while the loop was busy) therefore go out in one
    /// system call, and a thread fanning one message out to many connections only copies bytes, spread over the
    /// connections' loops. Order, atomicity, the outbound limit and overflow are exactly those of `write(_:)`, and
    /// the two may be mixed.
    ///
    /// - Returns: `true` when the bytes were queued; `false` after close or overflow.
    @discardableResult
    package func writeBatched(_ bytes: [UInt8]) -> Bool {
        write(bytes, sendingNow: false)
    }

    private func write(_ bytes: [UInt8], sendingNow: Bool) -> Bool {
        let outcome = state.withLock { state -> WriteOutcome in
            if let refusal = admission(of: bytes.count, &state) { return refusal }
            if bytes.isEmpty { return .accepted }
            if sendingNow { return enqueue(bytes, into: &state) ? .accepted : .failed }
            state.outbound.append(bytes)
            // Queued bytes are always on their way: epoll reports writability (set after a partial send), or a
            // flush is scheduled on the loop.
            guard !state.isFlushScheduled, !state.interest.contains(.writable) else { return .accepted }
            state.isFlushScheduled = true
            return .mustFlush
        }
        return complete(outcome)
    }

    /// What a write comes to, decided under the lock.
    enum WriteOutcome {
        case accepted
        /// Accepted; the loop must be asked to flush.
        case mustFlush
        /// Closed or overflowed before.
        case refused
        case overflowed(OutboundOverflow)
        /// The socket failed while the queue was being sent.
        case failed
    }

    /// Under the lock: `nil` when `byteCount` more bytes may join the queue, else the outcome that refuses them.
    ///
    /// The limit is for bytes the peer has not taken, not for bytes the loop has not sent yet (a loop kept off the
    /// CPU must not get a reading peer dropped): bytes that would pass it first hand the socket what it takes.
    /// A refusal for the limit marks the connection overflowed, so every later write is refused too.
    func admission(of byteCount: Int, _ state: inout State) -> WriteOutcome? {
        guard state.phase == .open, !state.hasOverflowed else { return .refused }
        var queued = state.outbound.count
        if queued + byteCount > options.maxOutboundBytes {
            guard sendQueued(&state) else { return .failed }
            queued = state.outbound.count
        }
        guard queued + byteCount <= options.maxOutboundBytes else {
            state.hasOverflowed = true
            return .overflowed(
                OutboundOverflow(queuedBytes: queued, refusedBytes: byteCount, limit: options.maxOutboundBytes))
        }
        return nil
    }

    /// After the lock: acts on `outcome` (a flush, `onOverflow` on the loop, a close after a failed send) and
    /// returns whether the bytes were accepted.
    func complete(_ outcome: WriteOutcome) -> Bool {
        switch outcome {
        case .accepted:
            return true
        case .mustFlush:
            // A stopped loop has closed (or is closing) the connection; the bytes die with it.
            _ = loop.submit { [self] in flush() }
            return true
        case .refused:
            return false
        case .overflowed(let overflow):
            loop.execute { [self] in
                if let handlers = state.withLock({ $0.handlers }) { handlers.onOverflow(overflow) }
            }
            return false
        case .failed:
            scheduleFinishClose()
            return false
        }
    }

    /// Sends what the socket takes now if nothing is queued, and queues the rest.
    ///
    /// - Returns: `false` when sending failed and the connection began closing (the caller must call
    ///   `scheduleFinishClose()` after releasing the lock).
    func enqueue(_ bytes: [UInt8], into state: inout State) -> Bool {
        guard !bytes.isEmpty else { return true }
        var sent = 0
        if state.outbound.isEmpty {
            let result = bytes.withUnsafeBytes { raw in
                Result { () throws(SystemError) in try Syscall.send(descriptor.rawValue, raw) }
            }
            switch result {
            case .success(let count):
                sent = count
            case .failure(let error):
                return !beginClose(&state, .error(error))
            }
        }
        if sent == bytes.count { return true }
        state.outbound.append(bytes[sent...])
        return updateInterest(&state)
    }

    // MARK: - Readiness

    /// Called by the loop with what epoll reported.
    func handle(_ readiness: IOReadiness) {
        if readiness.contains(.writable) { flush() }
        if !readiness.isDisjoint(with: [.readable, .hangup, .error]) { read(after: readiness) }
    }

    /// Sends queued bytes until the queue is empty or the socket is full (then epoll reports when it has room);
    /// on epoll's writability and for `writeBatched(_:)`'s scheduled flush.
    package func flush() {
        enum Outcome { case idle, drained(Handlers?), finish }
        let outcome = state.withLock { state -> Outcome in
            state.isFlushScheduled = false
            // A write that found the queue over the limit may have sent it itself; epoll still watching for room
            // means a drain is owed (and the interest must go, or level-triggered epoll reports it forever).
            guard !state.isClosed, !state.outbound.isEmpty || state.interest.contains(.writable) else { return .idle }
            guard sendQueued(&state) else { return .finish }
            if !state.outbound.isEmpty {
                // Full: epoll reports when there is room (already watched unless a batched flush got here).
                return updateInterest(&state) ? .idle : .finish
            }
            if state.phase == .draining { return beginClose(&state, .localClose) ? .finish : .idle }
            guard updateInterest(&state) else { return .finish }
            return .drained(state.phase == .open ? state.handlers : nil)
        }
        switch outcome {
        case .idle: break
        case .drained(let handlers): handlers?.onDrain()
        case .finish: finishClose()
        }
    }

    /// Sends queued bytes until the queue is empty or the socket takes no more.
    ///
    /// - Returns: `false` when sending failed and the connection began closing (the caller must call
    ///   `finishClose()`, or `scheduleFinishClose()` off the loop, after releasing the lock).
    func sendQueued(_ state: inout State) -> Bool {
        while !state.outbound.isEmpty {
            let result = state.outbound.withUnsentBytes { raw in
                Result { () throws(SystemError) in try Syscall.send(descriptor.rawValue, raw) }
            }
            switch result {
            case .success(0):
                return true
            case .success(let count):
                state.outbound.consume(count)
            case .failure(let error):
                _ = beginClose(&state, .error(error))
                return false
            }
        }
        return true
    }

    // MARK: - Pausing reads

    /// Stops reading from the peer until `resumeReading()`: bytes the peer sends wait in the socket (and, once its
    /// buffer is full, in the peer's), and `onRead` is not called — for an owner busy with what it has read, e.g. a
    /// large frame being parsed off the loop. Callable from any thread; a read already under way on the loop
    /// finishes. A hang-up or a socket error is still noticed: the connection then reads what is left and closes,
    /// as it would without the pause.
    package func pauseReading() {
        setReadingPaused(true)
    }

    /// Reads again after `pauseReading()`; bytes that arrived meanwhile are read on the loop's next turn.
    /// Callable from any thread; does nothing on a connection that is closing or was never paused.
    package func resumeReading() {
        setReadingPaused(false)
    }

    private func setReadingPaused(_ isPaused: Bool) {
        let mustFinish = state.withLock { state -> Bool in
            guard state.isReadingPaused != isPaused else { return false }
            state.isReadingPaused = isPaused
            return !updateInterest(&state)
        }
        if mustFinish { scheduleFinishClose() }
    }

    /// The peer's end of file: closes, or with an `onEndOfInput` handler stops reading and tells the handler. If
    /// the peer has closed entirely, not just its writing side, epoll reports the hang-up on the next turn (it
    /// does whatever the interest), and `read` then closes.
    private func endOfInput(_ handler: (@Sendable () -> Void)?) {
        guard let handler else {
            closeNow(.endOfFile)
            return
        }
        let mustFinish = state.withLock { state -> Bool in
            guard !state.isClosed, !state.isInputClosed else { return false }
            state.isInputClosed = true
            return !updateInterest(&state)
        }
        if mustFinish {
            scheduleFinishClose()
            return
        }
        handler()
    }

    /// Reads up to `maxReadsPerWakeup` times, handing each chunk to `onRead`.
    private func read(after readiness: IOReadiness) {
        enum Outcome: Sendable { case bytes([UInt8], filledBuffer: Bool), wouldBlock, endOfFile, failed(SystemError) }
        // Paused, the socket is read only to notice a hang-up or an error (epoll reports those whatever the
        // interest, and level-triggered, it would report them again on every turn).
        let readsEvenIfPaused = !readiness.isDisjoint(with: [.hangup, .error])
        for _ in 0..<options.maxReadsPerWakeup {
            let (phase, handlers, isPaused, isInputClosed) = state.withLock {
                ($0.phase, $0.handlers, $0.isReadingPaused, $0.isInputClosed)
            }
            if isInputClosed {
                // Only a hang-up or an error is reported now: the peer has closed its reading side too.
                if readsEvenIfPaused { closeNow(.endOfFile) }
                return
            }
            if isPaused, !readsEvenIfPaused { return }
            switch phase {
            case .open: break
            case .draining:
                // Not reading while draining; a peer that is gone entirely will never take the rest.
                if !readiness.isDisjoint(with: [.hangup, .error]) { closeNow(.localClose) }
                return
            case .closed: return
            }
            let outcome = loop.withReadBuffer { buffer -> Outcome in
                do throws(SystemError) {
                    guard let count = try Syscall.receive(descriptor.rawValue, into: buffer) else { return .wouldBlock }
                    if count == 0 { return .endOfFile }
                    return .bytes(
                        Array(UnsafeRawBufferPointer(rebasing: buffer[..<count])), filledBuffer: count == buffer.count)
                } catch {
                    return .failed(error)
                }
            }
            switch outcome {
            case .bytes(let bytes, let filledBuffer):
                handlers?.onRead(bytes)
                if !filledBuffer { return }
            case .wouldBlock:
                return
            case .endOfFile:
                endOfInput(handlers?.onEndOfInput)
                return
            case .failed(let error):
                closeNow(.error(error))
                return
            }
        }
    }
}
