import ContextBusSupport
public import Foundation

/// An `Operation` that does its work on a private context, saves it, merges the save into the
/// main context, then calls its save block and its completion: the design's context operation
/// for `OperationQueue`s.
///
/// ```swift
/// let queue = OperationQueue()
/// queue.maxConcurrentOperationCount = 2
/// let importer = ContextOperation(
///     parent: stack.root, mergingInto: stack.main,
///     steps: [
///         { context in try importDevices(into: context) },
///         { context in try importReadings(into: context) },
///     ],
///     saveBlock: { _ in try stack.saveRoot() },
///     completion: { outcome in log("import: \(outcome)") })
/// queue.addOperation(importer)
/// ```
///
/// The operation is asynchronous (`isAsynchronous`): from `start()` until it finishes it is
/// executing and counts against the queue's `maxConcurrentOperationCount`, while its steps run
/// on the context's queue, not on the queue's thread. In order, on the context's queue:
///
/// 1. each step, checking `isCancelled` before it (cooperative cancellation; a step may also
///    check `isCancelled` itself and return early);
/// 2. `isCancelled` is checked once more, then `context.save()`: cancelled before this point
///    means nothing is saved, and the context's changes are rolled back;
/// 3. the main context merges the save (or, when the context is main's child or a sibling that
///    main merges by itself, the operation waits for main's queue to have done so);
/// 4. `saveBlock` with the saved change set, then `completion`, back on the context's queue;
///    then the operation finishes (`isFinished`), which starts operations depending on it.
///
/// A step or save that throws ends the operation with `.failed` (changes rolled back); so does
/// a throwing `saveBlock` (the save into the parent has happened by then). A cancel after the
/// save changes nothing: the operation completes as `.saved`.
///
/// Thread safety: `Operation` is not `Sendable` in swift-corelibs-foundation, so this class is
/// `@unchecked Sendable`, with this invariant: every stored property is a `let` of a `Sendable`
/// type, and the mutable state (`executing`, `finished`, `outcome`) lives in one `Locked`, read
/// by the `isExecuting` / `isFinished` overrides and changed only in `start()` and `finish(_:)`,
/// which update it under the lock and send the KVO notifications (which Foundation's queue uses
/// to start dependants and free a concurrency slot) after releasing it. Steps, save block and
/// completion are never called with the lock held.
public final class ContextOperation: Operation, @unchecked Sendable {
    /// One step of work, run on the operation's context's queue.
    public typealias Step = @Sendable (ObjectContext) throws -> Void

    /// How an operation ended.
    public enum Outcome: Sendable, CustomStringConvertible {
        /// The context saved (into its parent, or its store) these changes; empty if there
        /// were none.
        case saved(ChangeSet)
        /// Cancelled before the save: nothing was saved.
        case cancelled
        /// A step, the save or the save block threw.
        case failed(any Error)

        public var description: String {
            switch self {
            case .saved(let changes):
                return "saved (\(changes.inserted.count) inserted, \(changes.updated.count) updated, "
                    + "\(changes.deleted.count) deleted)"
            case .cancelled: return "cancelled"
            case .failed(let error): return "failed: \(error)"
            }
        }
    }

    private struct State {
        var isExecuting = false
        var isFinished = false
        var outcome: Outcome?
    }

    /// The context the steps run in.
    public let context: ObjectContext
    /// The context that merges the save, if any.
    public let mainContext: ObjectContext?
    private let steps: [Step]
    private let saveBlock: (@Sendable (ChangeSet) throws -> Void)?
    private let completion: (@Sendable (Outcome) -> Void)?
    private let state = Locked(State())

    /// An operation working in `context` (a private-queue context the caller made).
    ///
    /// - Parameters:
    ///   - mainContext: the context that merges the save (`nil`: none).
    ///   - steps: the work, in order; cancellation is checked between steps.
    ///   - saveBlock: called with the saved change set, after the merge (for example to write
    ///     the root to disk with `ContextStack.saveRoot()`).
    ///   - completion: called last, with the outcome, before the operation finishes.
    public init(
        context: ObjectContext, mergingInto mainContext: ObjectContext? = nil, steps: [Step],
        saveBlock: (@Sendable (ChangeSet) throws -> Void)? = nil, completion: (@Sendable (Outcome) -> Void)? = nil
    ) {
        self.context = context
        self.mainContext = mainContext
        self.steps = steps
        self.saveBlock = saveBlock
        self.completion = completion
        super.init()
    }

    /// An operation working in a new private-queue child of `parent`.
    public convenience init(
        parent: ObjectContext, mergingInto mainContext: ObjectContext? = nil, name: String? = nil, steps: [Step],
        saveBlock: (@Sendable (ChangeSet) throws -> Void)? = nil, completion: (@Sendable (Outcome) -> Void)? = nil
    ) {
        self.init(
            context: ObjectContext(parent: parent, concurrency: .privateQueue, name: name ?? "operation"),
            mergingInto: mainContext, steps: steps, saveBlock: saveBlock, completion: completion)
    }

    /// How the operation ended; `nil` until it has.
    public var outcome: Outcome? { state.withLock { $0.outcome } }

    public override var isAsynchronous: Bool { true }
    public override var isExecuting: Bool { state.withLock { $0.isExecuting } }
    public override var isFinished: Bool { state.withLock { $0.isFinished } }

    public override func start() {
        guard !isCancelled else { return complete(.cancelled) }
        willChangeValue(forKey: "isExecuting")
        state.withLock { $0.isExecuting = true }
        didChangeValue(forKey: "isExecuting")
        context.perform { [self] in runSteps() }
    }

    // MARK: - The pipeline

    /// On the context's queue: steps, the last cancellation check, the save.
    private func runSteps() {
        do {
            for step in steps {
                guard !isCancelled else { return abandon(.cancelled) }
                try step(context)
            }
            guard !isCancelled else { return abandon(.cancelled) }
            let saved = Locked<ChangeSet?>(nil)
            let observation = context.observeSaves { changes in saved.withLock { $0 = changes } }
            try context.save()
            observation.cancel()
            let changes =
                saved.withLock { $0 }
                ?? ChangeSet(txn: 0, time: Date(), author: context.name, inserted: [], updated: [], deleted: [])
            mergeIntoMain(changes)
        } catch {
            abandon(.failed(error))
        }
    }

    /// Rolls the context back and completes without saving. On the context's queue.
    private func abandon(_ outcome: Outcome) {
        context.rollback()
        complete(outcome)
    }

    /// Has the main context merge `changes` (or wait for its own automatic merge), then goes on
    /// with the save block on the context's queue.
    private func mergeIntoMain(_ changes: ChangeSet) {
        guard let main = mainContext, main !== context else { return afterMerge(changes) }
        // The save went into main itself, or main merges its siblings' saves by itself.
        let mergesByItself =
            context.parent === main
            || (main.automaticallyMergesChanges && main.parent != nil && main.parent === context.parent)
        main.perform { [self] in
            // Blocks run in order: an automatic merge queued by the save has already run.
            if !mergesByItself && !changes.isEmpty { main.merge(changes) }
            context.perform { [self] in afterMerge(changes) }
        }
    }

    private func afterMerge(_ changes: ChangeSet) {
        do {
            try saveBlock?(changes)
            complete(.saved(changes))
        } catch {
            complete(.failed(error))
        }
    }

    private func complete(_ outcome: Outcome) {
        completion?(outcome)
        finish(outcome)
    }

    // MARK: - State and KVO

    /// Marks the operation finished (and no longer executing) under the lock, then tells the
    /// queue through KVO, outside the lock.
    private func finish(_ outcome: Outcome) {
        willChangeValue(forKey: "isExecuting")
        willChangeValue(forKey: "isFinished")
        state.withLock { state in
            state.outcome = outcome
            state.isExecuting = false
            state.isFinished = true
        }
        didChangeValue(forKey: "isExecuting")
        didChangeValue(forKey: "isFinished")
    }
}
