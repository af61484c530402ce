public import Dispatch

/// Measures how long a serial queue stays busy: a timer on the queue ticks every `interval` and
/// records how late each tick ran. A late tick means the queue was running something else (or
/// the machine was busy) for that long: the longest lateness is the queue's longest stall.
///
/// ```swift
/// let meter = QueueStallMeter(queue: stack.main.queue)
/// meter.start()
/// runImport()
/// let report = meter.stop()
/// print("main queue: longest stall \(report.longest), p99 \(report.p99)")
/// ```
public final class QueueStallMeter: Sendable {
    /// What a measurement found.
    public struct Report: Sendable, CustomStringConvertible {
        /// How many ticks ran.
        public var ticks: Int
        /// The longest delay of a tick beyond its interval.
        public var longest: Duration
        /// The 99th percentile of the delays.
        public var p99: Duration
        /// The median delay.
        public var median: Duration

        public var description: String {
            "\(ticks) ticks, longest stall \(Self.milliseconds(longest)), p99 \(Self.milliseconds(p99)), "
                + "median \(Self.milliseconds(median))"
        }

        /// `d` in milliseconds with two decimals, e.g. "1.25 ms".
        public static func milliseconds(_ d: Duration) -> String {
            let ms = Double(d.components.seconds) * 1_000 + Double(d.components.attoseconds) / 1e15
            return "\((ms * 100).rounded() / 100) ms"
        }
    }

    private struct State {
        var timer: DispatchSourceBox?
        var last: UInt64?
        var delays: [UInt64] = []
    }

    /// The queue measured.
    public let queue: DispatchQueue
    /// The time between ticks.
    public let interval: Duration
    private let state = Locked(State())

    public init(queue: DispatchQueue, interval: Duration = .milliseconds(1)) {
        self.queue = queue
        self.interval = interval
    }

    /// Starts ticking (again from zero).
    public func start() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = Int(
            interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now(), repeating: .nanoseconds(nanoseconds), leeway: .nanoseconds(0))
        let expected = UInt64(nanoseconds)
        timer.setEventHandler { [state] in
            let now = DispatchTime.now().uptimeNanoseconds
            state.withLock { state in
                if let last = state.last { state.delays.append(now - last > expected ? now - last - expected : 0) }
                state.last = now
            }
        }
        let box = DispatchSourceBox(timer)
        let previous = state.withLock { state -> DispatchSourceBox? in
            defer {
                state.timer = box
                state.last = nil
                state.delays = []
            }
            return state.timer
        }
        previous?.source.cancel()
        timer.resume()
    }

    /// Stops ticking and reports.
    public func stop() -> Report {
        let timer = state.withLock { state -> DispatchSourceBox? in
            defer { state.timer = nil }
            return state.timer
        }
        timer?.source.cancel()
        // Let a tick already running finish before reading.
        queue.sync {}
        let delays = state.withLock { $0.delays }.sorted()
        func at(_ fraction: Double) -> Duration {
            guard !delays.isEmpty else { return .zero }
            let index = min(delays.count - 1, Int((Double(delays.count - 1) * fraction).rounded(.up)))
            return .nanoseconds(Int64(delays[index]))
        }
        return Report(ticks: delays.count, longest: at(1), p99: at(0.99), median: at(0.5))
    }
}
