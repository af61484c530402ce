import Dispatch

/// Runs the jobs of async handler tasks on the server's handler queue instead of Swift's cooperative pool.
///
/// The cooperative pool has one thread per CPU and must never be blocked; a service's handlers (or the program
/// around them) may well block. With this executor as their task executor preference, async handlers and what
/// they await without an executor of their own run on the handler queue, whose threads Dispatch adds as
/// needed, so a blocked handler cannot starve the rest of the process's tasks and vice versa.
final class HandlerExecutor: TaskExecutor {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
