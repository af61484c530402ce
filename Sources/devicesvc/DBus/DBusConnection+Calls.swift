import ContextBusSupport
import Dispatch

/// Sending messages and calling methods.
extension DBusConnection {
    /// The timeout libdbus uses when a caller gives none.
    static let defaultTimeout = Duration.seconds(25)

    /// Sends a message that expects no reply (a signal, a reply, or a call flagged `noReplyExpected`).
    ///
    /// - Returns: the serial the message was sent with.
    /// - Throws: `DBusConnectionError.invalidMessage` when it cannot be encoded, `.disconnected` when closed.
    @discardableResult
    package func send(_ message: DBusMessage) throws(DBusConnectionError) -> UInt32 {
        var message = message
        message.serial = makeSerial()
        let bytes: [UInt8]
        do {
            bytes = try message.encoded()
        } catch {
            throw .invalidMessage(error)
        }
        try write(bytes)
        return message.serial
    }

    /// Calls a method and waits for its reply.
    ///
    /// - Parameters:
    ///   - timeout: how long to wait for the reply; on expiry the call fails with
    ///     `DBusConnectionError.timedOut` and a later reply is dropped.
    /// - Returns: the method return message; its `body` holds the results.
    /// - Throws: `DBusError` for an error reply (e.g. `org.bluez.Error.Failed`), `DBusConnectionError` when the call
    ///   times out, cannot be sent or the connection closes, `CancellationError` when the task is cancelled.
    func call(_ message: DBusMessage, timeout: Duration = defaultTimeout) async throws -> DBusMessage {
        let handle = CallHandle()
        return try await withTaskCancellationHandler {
            try await withLockedThrowingContinuation { continuation in
                let serial = call(message, timeout: timeout) { result in continuation.resume(with: result) }
                if !handle.setSerial(serial) { cancelCall(serial: serial) }
            }
        } onCancel: {
            if let serial = handle.markCancelled() { cancelCall(serial: serial) }
        }
    }

    /// Calls a method and waits for its reply; see `call(_:timeout:)`.
    func call(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = [],
        timeout: Duration = defaultTimeout
    ) async throws -> DBusMessage {
        try await call(
            .methodCall(destination: destination, path: path, interface: interface, member: member, body: body),
            timeout: timeout)
    }

    /// Calls a method and runs `completion` with the reply on the delivery queue, in arrival order with signals.
    ///
    /// `completion` runs exactly once: with the reply, a `DBusError`, or a `DBusConnectionError`.
    ///
    /// - Returns: the call's serial, for `cancelCall(serial:)`.
    @discardableResult
    package func call(
        _ message: DBusMessage, timeout: Duration = defaultTimeout,
        completion: @escaping @Sendable (Result<DBusMessage, any Error>) -> Void
    ) -> UInt32 {
        startCall(message, timeout: timeout, completesOnReader: false, completion: completion)
    }

    /// Stops waiting for the reply to call `serial`: its completion gets `CancellationError`, and a later reply is
    /// dropped. Does nothing when the call already completed.
    package func cancelCall(serial: UInt32) {
        guard let call = state.withLock({ $0.pendingCalls.removeValue(forKey: serial) }) else { return }
        complete(call, with: .failure(CancellationError()))
    }

    /// The number of calls waiting for a reply.
    package var pendingCallCount: Int { state.withLock { $0.pendingCalls.count } }

    // MARK: - Internals

    func startCall(
        _ message: DBusMessage, timeout: Duration, completesOnReader: Bool,
        completion: @escaping @Sendable (Result<DBusMessage, any Error>) -> Void
    ) -> UInt32 {
        var message = message
        message.serial = makeSerial()
        message.flags.remove(.noReplyExpected)
        let serial = message.serial
        let member = message.member ?? "?"
        let bytes: [UInt8]
        do {
            bytes = try message.encoded()
        } catch {
            let failure = PendingCall(member: member, completesOnReader: completesOnReader, completion: completion)
            complete(failure, with: .failure(DBusConnectionError.invalidMessage(error)))
            return serial
        }
        let call = PendingCall(member: member, completesOnReader: completesOnReader, completion: completion)
        let closeReason = state.withLock { state -> DBusConnectionError? in
            if let reason = state.closeReason { return reason }
            state.pendingCalls[serial] = call
            return nil
        }
        if let closeReason {
            complete(call, with: .failure(closeReason))
            return serial
        }
        // Completing the call cancels its timer; the timer is stored after the call, so a call that completes in
        // between cancels it here.
        let timer = callTimeouts.schedule(at: .now() + timeout.dispatchInterval) { [weak self] in
            self?.expireCall(serial: serial, member: member, timeout: timeout)
        }
        let isPending = state.withLock { state in
            guard state.pendingCalls[serial] != nil else { return false }
            state.pendingCalls[serial]?.timeout = timer
            return true
        }
        if !isPending { timer.dispose() }
        do {
            try write(bytes)
        } catch {
            if let call = state.withLock({ $0.pendingCalls.removeValue(forKey: serial) }) {
                complete(call, with: .failure(error))
            }
        }
        return serial
    }

    private func expireCall(serial: UInt32, member: String, timeout: Duration) {
        guard let call = state.withLock({ $0.pendingCalls.removeValue(forKey: serial) }) else { return }
        complete(call, with: .failure(DBusConnectionError.timedOut(member: member, after: timeout)))
    }

    /// The next serial: never zero, wrapping after 2³² − 1.
    func makeSerial() -> UInt32 {
        while true {
            let serial = serialCounter.wrappingAdd(1, ordering: .relaxed).newValue
            if serial != 0 { return serial }
        }
    }

    private func write(_ bytes: [UInt8]) throws(DBusConnectionError) {
        try writeLock.withLock { isWritable throws(DBusConnectionError) in
            guard isWritable else {
                throw state.withLock { $0.closeReason } ?? .disconnected(reason: "the socket is closed")
            }
            do {
                try socket.send(bytes)
            } catch {
                throw .disconnected(reason: "\(error)")
            }
        }
    }
}

/// The serial of an async call and whether its task was cancelled, shared by the call and its cancel handler.
private final class CallHandle: Sendable {
    private let storage = Locked<(serial: UInt32?, isCancelled: Bool)>((nil, false))

    /// Records the serial; returns `false` when the task was already cancelled.
    func setSerial(_ serial: UInt32) -> Bool {
        storage.withLock { state in
            state.serial = serial
            return !state.isCancelled
        }
    }

    /// Records the cancellation; returns the serial when the call has started.
    func markCancelled() -> UInt32? {
        storage.withLock { state in
            state.isCancelled = true
            return state.serial
        }
    }
}

extension Duration {
    /// The duration as a Dispatch interval, in nanoseconds.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !nanoseconds.overflow, seconds >= 0 else { return seconds < 0 ? .nanoseconds(0) : .never }
        return .nanoseconds(Int(nanoseconds.partialValue + attoseconds / 1_000_000_000))
    }
}
