import ContextBusSupport
import ContextBusTransport

/// Runs jobs one at a time in the order they were added; a job ends when it calls the `finished` it is given.
///
/// Jobs start on the thread that adds them (when the lane is idle) or on the thread that finished the previous
/// one, so a job must only start its work elsewhere (a task, a queue) and return.
final class OrderedLane: Sendable {
    typealias Job = @Sendable (_ finished: @escaping @Sendable () -> Void) -> Void

    private struct State {
        var jobs = RingQueue<Job>()
        var isRunning = false
    }

    private let state = Locked(State())

    /// Adds `job`; it starts now if the lane is idle.
    func enqueue(_ job: @escaping Job) {
        let startNow = state.withLock { state -> Bool in
            if state.isRunning {
                state.jobs.append(job)
                return false
            }
            state.isRunning = true
            return true
        }
        if startNow { run(job) }
    }

    private func run(_ job: @escaping Job) {
        let finished = AtomicFlag()
        job { [self] in
            guard finished.setOnce() else { return }
            next()
        }
    }

    private func next() {
        let job = state.withLock { state -> Job? in
            guard let job = state.jobs.popFirst() else {
                state.isRunning = false
                return nil
            }
            return job
        }
        if let job { run(job) }
    }
}

/// A FIFO queue with O(1) append and removal at the front.
struct RingQueue<Element> {
    private var items: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func append(_ element: Element) {
        items.append(element)
    }

    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 1024)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
