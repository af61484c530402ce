import Synchronization

/// One run of an inner `Signal { observer, lifetime in … }` of `flatMap`: the gate in front of its producer, the
/// target of the observer handed to it, and the owner of its lifetime, in one object.
///
/// Started generically, such an inner signal would get a nested lifetime, an observer ending it, an `EventGate`
/// with a drain of its own, and an observer into the flattener: a dozen allocations and several locks per value
/// of the outer signal. The flattener's own drain already serialises every event it handles and drops an inner
/// run's events once the run is over, so this run only needs what the contract asks of a gate
/// (docs/ReactiveContracts.md):
/// - the first terminal event closes it: its lifetime ends (the producer's cleanup runs) **before** the event
///   is handed to the flattener, and everything sent after it is dropped;
/// - disposing it (the flattener disposing the run, or the flatMap's run ending) interrupts it in the same way:
///   its lifetime ends, then `interrupted` is handed to the flattener;
/// - events sent concurrently or recursively are serialised by the flattener's drain (never delivered nested,
///   in order per sending thread).
///
/// Most such producers send their value and terminal event at once, inside the call that starts them, on the
/// drain's emitting thread: the flattener keeps them instead of queueing them (`Flattener.StartWindow`).
///
/// No stored property of this class has a type that depends on `Value` or `Failure`: a generic class's deinit is
/// not specialised, and would look up the metadata of such a type at each deallocation.
@usableFromInline
final class FlattenedRun<Value: Sendable, Failure: Error>: Disposable {
    @usableFromInline
    let flattener: Flattener<Value, Failure>
    /// Which inner run of the flattener this is. Changed only by `reopen`, when nothing else can reach the run.
    @usableFromInline
    @exclusivity(unchecked)
    nonisolated(unsafe) var id: Flattener<Value, Failure>.InnerID
    /// The producer's lifetime: it ends when the run closes. Changed only by `reopen`.
    @usableFromInline
    @exclusivity(unchecked)
    nonisolated(unsafe) var lifetime = CompositeDisposable()
    /// Whether a terminal event (or the disposal) has been accepted.
    @usableFromInline
    let closed = Atomic<Bool>(false)
    /// The run's entry in the flatMap's lifetime (`noKey` when it has none): removed when the run closes, or, for a
    /// run that completes during its start, when the flattener does not keep it for the next inner run.
    @usableFromInline
    let parentKey = Atomic<UInt64>(FlattenedRun.noKey)
    @usableFromInline
    static var noKey: UInt64 { .max }

    @inlinable
    init(flattener: Flattener<Value, Failure>, id: Flattener<Value, Failure>.InnerID) {
        self.flattener = flattener
        self.id = id
    }

    /// Makes sure the run is in the flatMap's lifetime, so that its end interrupts the run; `false` (the run is
    /// interrupted) when that lifetime has ended.
    ///
    /// A reused run may still be in it from its last inner run; then the lifetime may have ended meanwhile (its
    /// entries ran and are gone). `reopen` opens the run, then this reads whether the lifetime ended, and the end of
    /// the lifetime marks it ended, then disposes its entries, all sequentially consistent: either this sees the end,
    /// or the end disposes the open run.
    @inlinable
    func register() -> Bool {
        if parentKey.load(ordering: .relaxed) == Self.noKey {
            guard let key = flattener.lifetime.disposables.insert(.disposable(self)) else { return false }
            parentKey.store(key, ordering: .releasing)
            return true
        }
        guard flattener.lifetime.hasEnded else { return true }
        parentKey.store(Self.noKey, ordering: .relaxed)
        dispose()
        return false
    }

    /// Takes the run out of the flatMap's lifetime, if it is in it.
    @inlinable
    func unregister() {
        let key = parentKey.exchange(Self.noKey, ordering: .acquiringAndReleasing)
        if key != Self.noKey { flattener.lifetime.disposables.remove(key) }
    }

    /// A new run, and the observer to hand its producer (its closures capture only the run).
    @inlinable
    static func make(
        flattener: Flattener<Value, Failure>, id: Flattener<Value, Failure>.InnerID
    ) -> (run: FlattenedRun, observer: Observer<Value, Failure>) {
        let run = FlattenedRun(flattener: flattener, id: id)
        return (run, Observer(value: { [run] in run.send(value: $0) }, termination: { [run] in run.send($0) }))
    }

    /// Makes a closed run ready for inner run `id`, with a lifetime that has not ended. Call only when nothing but
    /// the flattener holds the run's observer (`Flattener.takeSpare`): then nothing can send into the run, and the
    /// flattener's drain ordered everything it did before (its terminal event came through the drain, or on this
    /// thread).
    @inlinable
    func reopen(as id: Flattener<Value, Failure>.InnerID) {
        self.id = id
        if !isKnownUniquelyReferenced(&lifetime) || !lifetime.reopen() { lifetime = CompositeDisposable() }
        closed.store(false, ordering: .sequentiallyConsistent)
    }

    @inlinable
    var isDisposed: Bool { closed.load(ordering: .acquiring) }

    /// Runs `producer` on the calling thread, the flattener's emitter; returns what it sent meanwhile without
    /// queueing, for the flattener to handle next.
    @inlinable
    func start(
        _ producer: @Sendable (Observer<Value, Failure>, Lifetime) -> Void, observer: Observer<Value, Failure>
    ) -> (value: Value?, termination: Termination<Failure>?) {
        flattener.openStartWindow(for: id)
        producer(observer, Lifetime(lifetime))
        return flattener.closeStartWindow()
    }

    @inlinable
    func send(value: Value) {
        guard !closed.load(ordering: .relaxed) else { return }
        if flattener.keepsStartedValue(value, of: id) { return }
        flattener.submit(.innerValue(value, id))
    }

    @inlinable
    func send(_ termination: Termination<Failure>) {
        guard !closed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        lifetime.dispose()
        // Kept for the flattener, the run stays in the flatMap's lifetime: the flattener reuses it or takes it out.
        if flattener.keepsStartedTermination(termination, of: id) { return }
        unregister()
        flattener.submit(.innerTerminated(termination, id))
    }

    @inlinable
    func dispose() {
        send(.interrupted)
    }
}
