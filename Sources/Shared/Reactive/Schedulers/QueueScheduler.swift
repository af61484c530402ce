import ContextBusSupport
import Dispatch
import Synchronization

/// A scheduler backed by a serial `DispatchQueue` with a quality of service (RACScheduler's queue schedulers).
///
/// `isCurrent` is exact: the queue carries a `DispatchSpecificKey` naming this scheduler, and dispatch looks the
/// key up through target queues, so a block running on a queue that targets this one also counts as current.
public final class QueueScheduler: Scheduler {
    /// RACScheduler-style priorities, mapped to dispatch qualities of service.
    public enum Priority: Sendable {
        /// `.userInitiated`.
        case high
        /// `.default`.
        case `default`
        /// `.utility`.
        case low
        /// `.background`.
        case background

        var qos: DispatchQoS {
            switch self {
            case .high: return .userInitiated
            case .default: return .default
            case .low: return .utility
            case .background: return .background
            }
        }
    }

    /// The serial queue blocks run on.
    public let queue: DispatchQueue
    /// The name given at creation (also the queue's label).
    public let name: String
    private let identifier: UInt64
    /// The timers of `schedule(after:)`, on one dispatch source.
    private let deadlines: DispatchDeadlines

    private static let nextIdentifier = Atomic<UInt64>(1)

    /// Creates a scheduler on a new serial queue.
    ///
    /// - Parameters:
    ///   - name: the queue label, shown in errors and debuggers.
    ///   - qos: the quality of service of the queue's blocks.
    ///   - target: a queue to target (its blocks then also run under `target`'s constraints).
    public init(name: String = "contextbus.queue-scheduler", qos: DispatchQoS = .default, target: DispatchQueue? = nil)
    {
        self.name = name
        identifier = Self.nextIdentifier.wrappingAdd(1, ordering: .relaxed).oldValue
        queue = DispatchQueue(label: name, qos: qos, target: target)
        queue.setSpecific(key: queueSchedulerKey, value: identifier)
        deadlines = DispatchDeadlines(queue: queue)
    }

    /// Creates a scheduler on a new serial queue with a RACScheduler-style priority.
    public convenience init(name: String = "contextbus.queue-scheduler", priority: Priority) {
        self.init(name: name, qos: priority.qos)
    }

    public var now: SchedulerTime { .monotonicNow }

    public var isCurrent: Bool {
        DispatchQueue.getSpecific(key: queueSchedulerKey) == identifier
    }

    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> (any Disposable)? {
        let disposable = AnyDisposable()
        queue.async {
            if !disposable.isDisposed { action() }
        }
        return disposable
    }

    @discardableResult
    public func schedule(after time: SchedulerTime, _ action: @escaping @Sendable () -> Void) -> any Disposable {
        deadlines.schedule(at: time.dispatchTime, action)
    }

    public var description: String { "QueueScheduler(\(name))" }
}

/// The key under which a `QueueScheduler`'s queue stores the scheduler's identifier.
private let queueSchedulerKey = DispatchSpecificKey<UInt64>()

/// A timer of `DispatchDeadlines` is disposed like any scheduled action.
extension DispatchDeadlines.Timer: Disposable {}
