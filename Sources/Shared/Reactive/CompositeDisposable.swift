import ContextBusSupport
import Synchronization

/// A disposable that disposes many others together, in the order they were added.
///
/// Adding to an already disposed composite disposes the addition at once. Backs every `Lifetime`.
public final class CompositeDisposable: Disposable {
    private struct State {
        var bag = DisposalBag()
        var isDisposed = false
    }

    /// The entries and their lock, made by the first insertion: most lifetimes of nested runs (an inner
    /// `Signal { observer, lifetime in … }` of `flatMap` that never adds to its lifetime) never make them, and cost
    /// one allocation instead of three.
    ///
    /// How an insertion and a disposal that race agree: both use sequentially consistent operations, the insertion
    /// publishing the storage and then reading `disposed`, the disposal setting `disposed` and then reading the
    /// storage. So at least one sees the other's write: either the insertion sees `disposed` and runs its entry, or
    /// the disposal finds the storage and takes (or marks disposed, under the lock) whatever it holds.
    private let storage = Atomic<Unmanaged<Locked<State>>?>(nil)
    @usableFromInline
    let disposed = Atomic<Bool>(false)

    public init() {}

    deinit {
        storage.load(ordering: .acquiring)?.release()
    }

    /// A composite holding `disposables`.
    public convenience init(_ disposables: some Sequence<any Disposable>) {
        self.init()
        for disposable in disposables { add(disposable) }
    }

    /// Sequentially consistent, like the store that disposing makes: see `storage`, and `FlattenedRun.register`.
    @inlinable
    public var isDisposed: Bool { disposed.load(ordering: .sequentiallyConsistent) }

    /// Adds a disposable.
    ///
    /// - Returns: a disposable that removes `disposable` again without disposing it, or nil if the composite was
    ///   already disposed (in which case `disposable` has just been disposed).
    @discardableResult
    public func add(_ disposable: (any Disposable)?) -> (any Disposable)? {
        guard let disposable else { return nil }
        return removal(for: insert(.disposable(disposable)))
    }

    /// Adds an action to run on disposal.
    ///
    /// - Returns: a disposable that removes the action without running it, or nil if the composite was already
    ///   disposed (in which case `action` has just run).
    @discardableResult
    public func add(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        removal(for: insert(.action(action)))
    }

    /// Adds a disposable; the same as `add(_:)` with the removal handle ignored.
    public static func += (composite: CompositeDisposable, disposable: (any Disposable)?) {
        guard let disposable else { return }
        _ = composite.insert(.disposable(disposable))
    }

    public func dispose() {
        guard !disposed.exchange(true, ordering: .sequentiallyConsistent) else { return }
        guard let state = storage.load(ordering: .sequentiallyConsistent)?.takeUnretainedValue() else { return }
        let entries = state.withLock { state -> [DisposalBag.Entry] in
            state.isDisposed = true
            return state.bag.removeAll()
        }
        for entry in entries { entry.run() }
    }

    // MARK: - Internal, allocation-free registration

    /// Inserts an entry; returns its key, or nil (after running the entry) if already disposed.
    @usableFromInline
    func insert(_ entry: DisposalBag.Entry) -> DisposalBag.Key? {
        let key = lockedState().withLock { state -> DisposalBag.Key? in
            state.isDisposed || disposed.load(ordering: .sequentiallyConsistent) ? nil : state.bag.insert(entry)
        }
        if key == nil { entry.run() }
        return key
    }

    /// Makes a disposed composite that nothing else references empty and not disposed again (a nested run's
    /// lifetime, reused for the next run); `false` (nothing changed) when it is not disposed.
    @usableFromInline
    func reopen() -> Bool {
        guard disposed.load(ordering: .acquiring) else { return false }
        storage.load(ordering: .acquiring)?.takeUnretainedValue().withLock { $0.isDisposed = false }
        disposed.store(false, ordering: .releasing)
        return true
    }

    /// Removes an entry without running it.
    @usableFromInline
    func remove(_ key: DisposalBag.Key) {
        // A key comes from an insertion, which made the storage.
        guard let state = storage.load(ordering: .acquiring)?.takeUnretainedValue() else { return }
        _ = state.withLock { $0.bag.remove(key) }
    }

    /// The entries and their lock, made now if no insertion made them yet.
    private func lockedState() -> Locked<State> {
        if let existing = storage.load(ordering: .sequentiallyConsistent) { return existing.takeUnretainedValue() }
        let made = Unmanaged.passRetained(Locked(State()))
        let (exchanged, current) = storage.compareExchange(
            expected: nil, desired: made, ordering: .sequentiallyConsistent)
        if exchanged { return made.takeUnretainedValue() }
        made.release()
        return current!.takeUnretainedValue()
    }

    private func removal(for key: DisposalBag.Key?) -> (any Disposable)? {
        guard let key else { return nil }
        return AnyDisposable { [weak self] in self?.remove(key) }
    }
}
