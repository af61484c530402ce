import ContextBusSupport
import Dispatch

/// Rewrites a file with the service's metrics every interval, atomically, for node_exporter's textfile collector
/// (`--metrics-file PATH --metrics-interval SECONDS`).
///
/// Each rewrite writes `.<name>.tmp` in the same directory (mode 0644 less the umask) and renames it over `PATH`,
/// so the collector never reads half a file; node_exporter only reads files ending in `.prom`. The first write is
/// at `start()`; `stop()` removes the file, so that a stopped service's metrics vanish instead of going stale
/// (alert on `absent()` or on `node_textfile_mtime_seconds`).
package final class MetricsFileWriter: Sendable {
    package let path: String
    package let interval: Duration
    private let exposition: @Sendable () -> String
    private let onError: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "ContextBus.metrics-file", qos: .utility)
    private let isStopped = AtomicFlag()
    private let lastError = Locked<String?>(nil)

    /// A writer of `exposition()` to `path`; nothing is written until `start()`.
    ///
    /// - Parameter onError: Told once per distinct failure (the log); the writer keeps trying every interval.
    package init(
        path: String, interval: Duration, exposition: @escaping @Sendable () -> String,
        onError: @escaping @Sendable (String) -> Void
    ) {
        self.path = path
        self.interval = interval
        self.exposition = exposition
        self.onError = onError
    }

    /// Writes the file now and then every interval.
    package func start() {
        queue.async { [self] in tick() }
    }

    /// Stops rewriting and removes the file.
    package func stop() {
        guard isStopped.setOnce() else { return }
        queue.sync { FileSystem.removeFile(atPath: path) }
    }

    private func tick() {
        guard !isStopped.isSet else { return }
        writeNow()
        let (seconds, attoseconds) = interval.components
        let nanoseconds = Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        queue.asyncAfter(deadline: .now() + .nanoseconds(max(1, nanoseconds))) { [self] in tick() }
    }

    /// Writes the file once, on the writer's queue (tests call it through `start()`).
    func writeNow() {
        let text = exposition()
        let failure: String?
        do {
            try FileSystem.replaceFile(atPath: path, with: Array(text.utf8))
            failure = nil
        } catch {
            failure = "cannot write \(path): \(error)"
        }
        let isNew = lastError.withLock { last -> Bool in
            defer { last = failure }
            return failure != nil && last != failure
        }
        if isNew, let failure { onError(failure) }
    }
}
