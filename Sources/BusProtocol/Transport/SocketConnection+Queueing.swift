// Queueing without sending, for a loop that writes several frames to a connection and then sends them together.

extension SocketConnection {
    /// Appends `byteCount` bytes, written by `write`, to the outbound queue without a system call; call on the
    /// connection's loop, and call `flush()` after the last one.
    ///
    /// Order, atomicity, the outbound limit and overflow are those of `write(_:)`: the bytes go after everything
    /// written before, and when they would take the queue past `Options.maxOutboundBytes` even after the socket
    /// has taken what it can, nothing is queued, `onOverflow` follows on the loop, and every later write is
    /// refused.
    ///
    /// - Parameters:
    ///   - byteCount: How many bytes `write` appends (checked).
    ///   - write: Appends the bytes to the array it is given; it must only append. Called under the
    ///     connection's lock: it must not call back into the connection.
    /// - Returns: `true` when the bytes were queued; `false` after close or overflow.
    package func queueWithoutSending(byteCount: Int, _ write: (inout [UInt8]) -> Void) -> Bool {
        let outcome = state.withLock { state -> WriteOutcome in
            if let refusal = admission(of: byteCount, &state) { return refusal }
            let before = state.outbound.count
            state.outbound.append(byWriting: write)
            precondition(
                state.outbound.count == before + byteCount, "queued a different number of bytes than announced")
            return .accepted
        }
        return complete(outcome)
    }
}
