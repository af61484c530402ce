import ContextBusTransport
import ContextBusWire

extension BusClient {
    /// How a client connects, waits and reconnects.
    public struct Options: Sendable {
        /// The loop that serves the connection and delivers answers and events; `nil` uses one loop shared by
        /// every client of the process (`BusClient.sharedEventLoop()`).
        public var eventLoop: EventLoop?
        /// The timeout of calls that do not give their own; `nil` waits as long as the connection lives.
        public var callTimeout: Duration?
        /// How long connecting (a busy backlog) and the `bus.hello` answer may take.
        public var connectTimeout: Duration = .seconds(5)
        /// The largest frame accepted from the service (default 16 MiB, the protocol's default `maxFrame`).
        public var maxFrame: Int = Frame.defaultMaximumLength
        /// Bytes the outbound queue may hold before the connection is given up (a service that stopped reading).
        public var maxOutbound: Int = 8 * 1024 * 1024
        /// Reconnect after a lost connection; `nil` (the default) stays disconnected.
        public var reconnect: ReconnectPolicy?
        /// What calls made while the client reconnects do: fail at once (the default) or wait for the connection.
        public var callsWhileReconnecting: CallsWhileReconnecting = .fail

        public init(
            eventLoop: EventLoop? = nil, callTimeout: Duration? = nil, reconnect: ReconnectPolicy? = nil
        ) {
            self.eventLoop = eventLoop
            self.callTimeout = callTimeout
            self.reconnect = reconnect
        }
    }

    /// What a call made while the client reconnects does. Either way the service never sees a call that failed
    /// here: a call is sent only on a connection that is up.
    public enum CallsWhileReconnecting: Sendable, Hashable {
        /// Fail at once with `BusClientError.notConnected`.
        case fail
        /// Wait for the connection to come back, then be sent, in the order the calls were made and before any
        /// call made after the connection is up. The call's timeout counts from when it was made; a call still
        /// waiting fails with `.timedOut` when it passes, with `CancellationError` when cancelled, with
        /// `.notConnected` when the client gives up reconnecting and with `.closed` when it is closed. A call
        /// without a timeout waits as long as the client keeps trying.
        case wait
    }

    /// When to try again after the connection was lost: exponential backoff from `initialDelay`, doubling up to
    /// `maxDelay`, for at most `maxAttempts` attempts (`nil`: forever).
    public struct ReconnectPolicy: Sendable, Hashable {
        public var initialDelay: Duration
        public var maxDelay: Duration
        public var maxAttempts: Int?

        public init(
            initialDelay: Duration = .milliseconds(50), maxDelay: Duration = .seconds(2), maxAttempts: Int? = nil
        ) {
            precondition(initialDelay >= .zero && maxDelay >= initialDelay, "reconnect delays must be ordered")
            precondition(maxAttempts.map { $0 > 0 } ?? true, "maxAttempts must be positive")
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
            self.maxAttempts = maxAttempts
        }

        /// The wait before attempt `attempt` (1-based): `initialDelay`, doubled per attempt, at most `maxDelay`.
        public func delay(beforeAttempt attempt: Int) -> Duration {
            var delay = initialDelay
            for _ in 1..<max(1, attempt) {
                delay *= 2
                if delay >= maxDelay { return maxDelay }
            }
            return min(delay, maxDelay)
        }

        /// Whether attempt `attempt` (1-based) may be made.
        func allows(attempt: Int) -> Bool {
            maxAttempts.map { attempt <= $0 } ?? true
        }
    }

    /// Where a client is in its life.
    public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
        /// Connected, with the service's `bus.hello` answer.
        case connected(HelloResult)
        /// The connection was lost; attempt `attempt` to reconnect is pending. Calls fail with `notConnected`, or
        /// wait (`CallsWhileReconnecting.wait`).
        case reconnecting(attempt: Int, lastError: String)
        /// The connection was lost and will not be restored (no reconnect policy, or it gave up). Final.
        case disconnected(reason: String)
        /// `close()` was called. Final.
        case closed

        /// Whether calls can be made now.
        public var isConnected: Bool {
            if case .connected = self { return true }
            return false
        }

        /// Whether the client has reached the end of its life.
        public var isFinal: Bool {
            switch self {
            case .connected, .reconnecting: return false
            case .disconnected, .closed: return true
            }
        }

        public var description: String {
            switch self {
            case .connected(let hello): return "connected to \(hello.server) \(hello.version)"
            case .reconnecting(let attempt, let lastError): return "reconnecting (attempt \(attempt)): \(lastError)"
            case .disconnected(let reason): return "disconnected: \(reason)"
            case .closed: return "closed"
            }
        }
    }
}
