import ContextBusReactive
import ContextBusSupport
import ContextBusWire
import Foundation

/// Runs `device.run` chains: each chain is a `Signal` of its steps' progress, queued through `ChainQueue`.
///
/// ```
///  makeChain(params) ─▶ Chain.signal (cold) ──start──▶ chains queue: FIFO per device (or one lane: --serialize global),
///                                                      at most --max-concurrent running
///                                  │ its turn
///                                  ▼
///       steps, one after the other (flatMap .concat), each its kind's RunnableStep.run(in:) (Chains/Steps/) with
///       its timeout; read/write/notify/wait fail on link loss
///            connect ─▶ connections queue (--concurrent-connects link set-ups at once, default 1, each held until
///                       Connected) ─▶
///                       Connect + ServicesResolved; each retry queues again
///                                  │ first failure, cancellation, or chain timeout
///                                  ▼
///       disconnect (if connect ran) ─▶ ChainError(step, reason, results so far)
/// ```
///
/// The disconnect after a failure is part of the queued signal, so the next chain on the device starts only
/// after it. A chain cancelled while queued leaves the queue without touching the device.
final class ChainRunner: Sendable {
    /// One chain, ready to start.
    struct Chain: Sendable {
        /// `c-17`.
        let id: String
        let control: ChainControl
        /// Starting it queues the chain; it sends the chain's progress and completes, or fails with a
        /// `ChainError`. Start it once.
        let signal: Signal<ChainProgress, ChainError>
    }

    let backend: any DeviceBackend
    let scheduler: any Scheduler
    let settings: ChainSettings
    private let chains: ChainQueue<String>
    /// Link set-ups, keyed by device: at most `settings.concurrentConnects` at once, in the order they were asked for.
    /// Watches take the same turns for their connects (`WatchLink`).
    let connections: ChainQueue<String>
    /// The formats read and notified values are decoded with.
    let decoders: CharacteristicDecoders
    private let state = Locked(State())
    /// Tells about retries (for the log).
    private let onRetry: (@Sendable (_ chain: String, _ step: Int, DeviceError, _ retry: Int) -> Void)?
    /// Whether a watch holds a device's link now (`WatchManager.holdsLink`): chains then neither disconnect it nor
    /// clean up after a failure with a disconnect.
    private let isLinkHeld: @Sendable (BluetoothAddress, String) -> Bool

    private struct State {
        var nextID = 1
        var active: [String: (order: Int, control: ChainControl)] = [:]
    }

    init(
        backend: any DeviceBackend, scheduler: any Scheduler, settings: ChainSettings,
        decoders: CharacteristicDecoders = .standard,
        onRetry: (@Sendable (_ chain: String, _ step: Int, DeviceError, _ retry: Int) -> Void)? = nil,
        isLinkHeld: @escaping @Sendable (BluetoothAddress, String) -> Bool = { _, _ in false }
    ) {
        self.backend = backend
        self.scheduler = scheduler
        self.settings = settings
        self.decoders = decoders
        self.onRetry = onRetry
        self.isLinkHeld = isLinkHeld
        // Global mode is one key for every chain: the same FIFO, one lane.
        chains = ChainQueue(
            mode: .perKey, maxConcurrent: settings.serialization == .global ? 1 : settings.maxConcurrent)
        connections = ChainQueue(mode: .perKey, maxConcurrent: settings.concurrentConnects)
    }

    // MARK: - Chains

    /// Makes a chain for `params` with a new id.
    func makeChain(_ params: RunParams) -> Chain {
        let (id, order) = state.withLock { state -> (String, Int) in
            defer { state.nextID += 1 }
            return ("c-\(state.nextID)", state.nextID)
        }
        let control = ChainControl()
        let key = settings.serialization == .global ? "*" : params.address.string
        let queued = chains.enqueue(run(id: id, params: params, control: control), for: key)
        let signal = Signal<ChainProgress, ChainError> { [self] observer, lifetime in
            state.withLock { $0.active[id] = (order, control) }
            lifetime.observeEnded { [self] in _ = state.withLock { $0.active.removeValue(forKey: id) } }
            // While queued, a cancellation fails the chain at once; its disposal takes it out of the queue.
            lifetime += control.listen {
                observer.send(error: ChainError(chain: id, step: 0, reason: .cancelled, results: []))
            }
            lifetime += queued.start(observer)
        }
        return Chain(id: id, control: control, signal: signal)
    }

    /// Cancels the chain `id`; `false` when no such chain is queued or running.
    func cancel(chain id: String) -> Bool {
        guard let control = state.withLock({ $0.active[id]?.control }) else { return false }
        control.cancel()
        return true
    }

    /// Cancels every queued and running chain (running ones still disconnect).
    ///
    /// The newest go first, so that a queued chain is out of the line before the chain ahead of it ends and
    /// would let it start.
    func cancelAll() {
        let controls = state.withLock { $0.active.values.sorted { $0.order > $1.order }.map(\.control) }
        for control in controls { control.cancel() }
    }

    /// Chains queued or running now.
    var activeCount: Int { state.withLock { $0.active.count } }

    /// The chains' queue now: per device address (`*` under `--serialize global`), running and waiting chains.
    var queueStatus: ChainQueue<String>.Status { chains.status }
    /// Runs `work` in the device's chain lane: after the chains queued on the device before it, and before those
    /// queued after it (what `device.unwatch` disconnects with, so that a chain using the watch's link finishes first).
    func afterChains<Value: Sendable, Failure: Error>(
        on address: BluetoothAddress, run work: Signal<Value, Failure>
    ) -> Signal<Value, Failure> {
        chains.enqueue(work, for: settings.serialization == .global ? "*" : address.string)
    }

    // MARK: - One chain

    /// The chain's work once its turn has come.
    private func run(id: String, params: RunParams, control: ChainControl) -> Signal<ChainProgress, ChainError> {
        Signal { [self] observer, lifetime in
            let record = ChainRecord()
            let adapter = params.adapter ?? settings.adapter
            let chainTimeout = params.timeoutMs.map { Duration.milliseconds($0) } ?? settings.chainTimeout
            let body = Signal<IndexedStep, StepFailure>(
                values: params.steps.enumerated().map { IndexedStep(index: $0.offset, step: $0.element) }
            ).flatMap(.concat) { [self] indexed in
                stepSignal(indexed, address: params.address, adapter: adapter, record: record, chain: id)
            }
            let guarded = Signal<ChainProgress, StepFailure> { [self] inner, innerLifetime in
                innerLifetime += control.listen {
                    inner.send(error: StepFailure(step: record.currentStep, reason: .cancelled))
                }
                innerLifetime += scheduler.schedule(after: chainTimeout) {
                    inner.send(error: StepFailure(step: record.currentStep, reason: .chainTimedOut(chainTimeout)))
                }
                do throws(DeviceError) {
                    _ = try backend.availableTree()
                } catch {
                    return inner.send(error: StepFailure(step: 0, reason: .device(error)))
                }
                innerLifetime += body.start(inner)
            }
            let finished = guarded.flatMapError { [self] failure -> Signal<ChainProgress, ChainError> in
                let error = ChainError(chain: id, step: failure.step, reason: failure.reason, results: record.results)
                guard record.needsDisconnect, !isLinkHeld(params.address, adapter) else { return Signal(error: error) }
                return cleanup(params.address, adapter: adapter).then(Signal(error: error))
            }
            lifetime += finished.start(observer)
        }
    }

    /// The disconnect after a failure: bounded, and its own failure does not matter (the chain already failed).
    private func cleanup(_ address: BluetoothAddress, adapter: String) -> Signal<Void, ChainError> {
        backend.disconnect(address, onAdapter: adapter, callTimeout: settings.cleanupTimeout)
            .retrying(settings.retry, on: scheduler)
            .timeout(
                after: settings.cleanupTimeout, raising: .noReply(member: "Disconnect", after: .zero), on: scheduler
            )
            .flatMapError { _ in Signal<Void, ChainError>.empty }
    }

    // MARK: - Steps

    /// One step: its kind's work (`RunnableStep.run(in:)`), its timeout, its failures as the chain's, and its
    /// result recorded.
    private func stepSignal(
        _ indexed: IndexedStep, address: BluetoothAddress, adapter: String, record: ChainRecord, chain: String
    ) -> Signal<ChainProgress, StepFailure> {
        let index = indexed.index
        let step = indexed.step.runnable
        let timeout = indexed.step.timeoutMs.map { Duration.milliseconds($0) } ?? settings.stepTimeout
        let onRetry = self.onRetry.map { report in
            { @Sendable (error: DeviceError, retry: Int) in report(chain, index, error, retry) }
        }
        let context = StepContext(
            index: index, address: address, timeout: timeout, backend: backend, scheduler: scheduler,
            settings: settings, record: record, connections: connections, onRetry: onRetry, decoders: decoders,
            adapter: adapter, isLinkHeld: { [isLinkHeld] in isLinkHeld(address, adapter) })
        var signal = step.run(in: context).mapError { StepFailure(step: index, reason: .device($0)) }
        if step.isBoundedByStepTimeout {
            signal = signal.timeout(
                after: timeout, raising: StepFailure(step: index, reason: .stepTimedOut(timeout)), on: scheduler)
        }
        return signal.on(
            starting: { record.begin(index) },
            value: { progress in
                if case .finished(let result) = progress { record.finish(result) }
            })
    }
}

/// A step with its index in the chain.
struct IndexedStep: Sendable {
    let index: Int
    let step: ChainStep
}
