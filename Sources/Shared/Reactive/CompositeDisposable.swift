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

    private let state = Locked(State())
    private let disposed = Atomic<Bool>(false)

    public init() {}

    /// A composite holding `disposables`.
    public convenience init(_ disposables: some Sequence<any Disposable>) {
        self.init()
        for disposable in disposables { add(disposable) }
    }

    public var isDisposed: Bool { disposed.load(ordering: .acquiring) }

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
        let entries = state.withLock { state -> [DisposalBag.Entry] in
            guard !state.isDisposed else { return [] }
            state.isDisposed = true
            disposed.store(true, ordering: .releasing)
            return state.bag.removeAll()
        }
        for entry in entries { entry.run() }
    }

    // MARK: - Internal, allocation-free registration

    /// Inserts an entry; returns its key, or nil (after running the entry) if already disposed.
    @usableFromInline
    func insert(_ entry: DisposalBag.Entry) -> DisposalBag.Key? {
        let key = state.withLock { state -> DisposalBag.Key? in
            state.isDisposed ? nil : state.bag.insert(entry)
        }
        if key == nil { entry.run() }
        return key
    }

    /// Removes an entry without running it.
    @usableFromInline
    func remove(_ key: DisposalBag.Key) {
        _ = state.withLock { $0.bag.remove(key) }
    }

    private func removal(for key: DisposalBag.Key?) -> (any Disposable)? {
        guard let key else { return nil }
        return AnyDisposable { [weak self] in self?.remove(key) }
    }
}
