import ContextBusSupport

/// Runs whole signals ("chains") one at a time per key, in arrival order, with a cap on how many run at once.
///
/// `enqueue(_:for:)` returns a signal that, when started, takes its place in the line of its key and starts
/// the chain only when (1) every chain that took a place earlier under the same key has terminated and (2)
/// fewer than `maxConcurrent` chains are running. Chains under different keys run concurrently. In `.global`
/// mode every key shares one line, so chains run one at a time overall. Disposing a chain that is still
/// waiting removes it from the line without ever starting it (its observer receives `interrupted`); disposing
/// a running chain interrupts it and lets the next one start.
///
/// ```swift
/// let devices = ChainQueue<DeviceAddress>(maxConcurrent: 4)
/// let adapters = ChainQueue<AdapterName>()
/// let chain = adapters.enqueue(connect(address), for: adapter)   // connection set-up: one per adapter
///     .then(steps(address))
/// devices.enqueue(chain, for: address).start(observer)           // chains: one per device, FIFO
/// ```
///
/// When a slot frees up, the waiting chain that arrived first among those whose key is free starts next.
public final class ChainQueue<Key: Hashable & Sendable>: Sendable {
    /// Whether keys are serialised separately or all together.
    public enum Mode: Sendable {
        /// One chain at a time per key; different keys run concurrently.
        case perKey
        /// One chain at a time overall, whatever its key.
        case global
    }

    /// A snapshot of the queue, for diagnostics and tests.
    public struct Status: Sendable {
        /// Keys with a running chain.
        public var runningKeys: Set<Key>
        /// Number of chains waiting, per key (only keys with waiting chains).
        public var waitingCounts: [Key: Int]

        /// Total number of running chains.
        public var runningCount: Int { runningKeys.count }
        /// Total number of waiting chains.
        public var waitingCount: Int { waitingCounts.values.reduce(0, +) }
    }

    /// The serialisation mode.
    public let mode: Mode
    /// The most chains that run at the same time.
    public let maxConcurrent: Int

    private let state = Locked(ChainQueueState<Key>())
    /// Makes `pump` a loop rather than a recursion when chains finish synchronously.
    private let pumpDrain = SerialDrain<Void>()

    /// Creates a queue.
    ///
    /// - Parameters:
    ///   - mode: `.perKey` (default) or `.global`.
    ///   - maxConcurrent: the cap on running chains (at least 1; default: no cap).
    public init(mode: Mode = .perKey, maxConcurrent: Int = .max) {
        precondition(maxConcurrent >= 1, "ChainQueue needs maxConcurrent >= 1, got \(maxConcurrent)")
        self.mode = mode
        self.maxConcurrent = mode == .global ? 1 : maxConcurrent
    }

    /// Returns a signal that runs `chain` when its turn under `key` comes; see the type's documentation.
    ///
    /// The place in line is taken when the returned signal is started (each start takes a new place).
    public func enqueue<Value: Sendable, Failure: Error>(
        _ chain: Signal<Value, Failure>, for key: Key
    ) -> Signal<Value, Failure> {
        Signal(deliverySchedulers: chain.deliverySchedulers) { [self] observer, lifetime in
            let ticket = state.withLock { state in
                state.enqueue(lane: mode == .global ? nil : key, key: key) { ticket in
                    chain.startNested(
                        in: lifetime,
                        Observer(
                            value: observer.valueAction,
                            termination: { [self] termination in
                                observer.terminationAction(termination)
                                finish(ticket)
                            }))
                }
            }
            lifetime.observeEnded { [self] in
                if state.withLock({ $0.cancelWaiting(ticket) }) {
                    observer.sendInterrupted()
                    pump()
                }
            }
            pump()
        }
    }

    /// The current state of the queue.
    public var status: Status {
        state.withLock { state in
            Status(runningKeys: state.runningKeys, waitingCounts: state.waitingCounts)
        }
    }

    private func finish(_ ticket: ChainQueueState<Key>.Ticket) {
        state.withLock { $0.finish(ticket) }
        pump()
    }

    /// Starts every chain whose turn has come. Called after every change; runs the starts outside the lock,
    /// and loops (through `pumpDrain`) instead of recursing when a started chain finishes synchronously.
    private func pump() {
        pumpDrain.submit(()) { [self] _ in
            while let start = state.withLock({ $0.nextStart(maxConcurrent: maxConcurrent) }) {
                start()
            }
        }
    }
}
