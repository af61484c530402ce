import ContextBusReactive

/// A `Scheduler` whose blocks run inside `context.perform`: the design's `CoreDataScheduler`
/// (a RACScheduler that runs blocks on a managed object context's queue).
///
/// Use it with `deliver(on:)`, `start(on:)` or `Signal.lazy(on:)` so that the operators after it
/// may touch the context's objects:
///
/// ```swift
/// let worker = stack.newWorker()
/// readings
///     .deliver(on: ContextScheduler(worker))
///     .map { reading -> ObjectID in          // on the worker's queue
///         let object = worker.insert(entity: "Reading")
///         object["characteristic", as: String.self] = reading.characteristic
///         return object.objectID
///     }
///     .startWithValues { _ in }
/// ```
///
/// Blocks run one at a time in the order scheduled (the context's queue is serial); a block whose
/// disposable is disposed before it starts is skipped; timed blocks wait on a shared timer queue,
/// then go through `perform`. `isCurrent` is the context's `isOnQueue`, so blocking `first()`
/// refuses to wait on the context's own queue. The scheduler keeps its context alive.
public final class ContextScheduler: Scheduler {
    /// The context whose queue runs the blocks.
    public let context: ObjectContext
    private let base: PerformScheduler

    /// A scheduler running blocks on `context`'s queue.
    public init(_ context: ObjectContext) {
        self.context = context
        base = PerformScheduler(
            name: "context \(context.name ?? "unnamed")",
            isCurrent: { context.isOnQueue },
            perform: { block in context.perform(block) })
    }

    public var now: SchedulerTime { base.now }

    public var isCurrent: Bool { base.isCurrent }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        base.schedule(action)
    }

    @discardableResult
    public func schedule(after time: SchedulerTime, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        base.schedule(after: time, action)
    }

    public var description: String { "ContextScheduler(\(context.name ?? "unnamed"))" }
}

extension ObjectContext {
    /// A scheduler whose blocks run on this context's queue (`ContextScheduler(self)`).
    public var scheduler: ContextScheduler { ContextScheduler(self) }
}
