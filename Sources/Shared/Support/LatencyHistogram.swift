import Synchronization

/// A histogram of durations with fixed bucket bounds, recorded from any thread with a few atomic adds: the
/// measurement points on hot paths (a commit, an `fdatasync`) that the services' metrics report.
///
/// Each observation adds 1 to its bucket and its nanoseconds to the sum; `snapshot` reads them (not as one atomic
/// whole: a snapshot taken while observations are recorded may count one in `count` before its nanoseconds are in
/// `sum`, which a monitoring scrape tolerates).
///
/// ```swift
/// let commits = LatencyHistogram()
/// let started = ContinuousClock.now
/// try commit()
/// commits.record(ContinuousClock.now - started)
/// let snapshot = commits.snapshot     // upper bounds in seconds, cumulative counts, sum
/// ```
package final class LatencyHistogram: Sendable {
    /// The default upper bounds, in seconds: 100 µs to 10 s, roughly ×2.5 per bucket (an SD card's fsync to a
    /// stalled disk's).
    package static let defaultBounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// The buckets' upper bounds, in seconds, ascending; an observation above the last counts only in `+Inf`.
    package let bounds: [Double]
    private let boundNanoseconds: [Int64]
    /// One counter per bound, plus one for `+Inf`; not cumulative.
    private let counts: [Counter]
    private let sumNanoseconds = Atomic<Int64>(0)

    private final class Counter: Sendable {
        let value = Atomic<Int64>(0)
    }

    /// A histogram with `bounds` (seconds, ascending, at least one).
    package init(bounds: [Double] = LatencyHistogram.defaultBounds) {
        precondition(!bounds.isEmpty && zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
        self.bounds = bounds
        boundNanoseconds = bounds.map { Int64(($0 * 1e9).rounded()) }
        counts = (0...bounds.count).map { _ in Counter() }
    }

    /// Records one observation.
    package func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        record(nanoseconds: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Records one observation of `nanoseconds` (negative ones count as 0).
    package func record(nanoseconds: Int64) {
        let value = max(0, nanoseconds)
        var index = 0
        while index < boundNanoseconds.count, value > boundNanoseconds[index] { index += 1 }
        counts[index].value.add(1, ordering: .relaxed)
        sumNanoseconds.add(value, ordering: .relaxed)
    }

    /// The counts so far.
    package var snapshot: Snapshot {
        var cumulative: [Int64] = []
        cumulative.reserveCapacity(counts.count)
        var running: Int64 = 0
        for counter in counts {
            running += counter.value.load(ordering: .relaxed)
            cumulative.append(running)
        }
        let sum = Double(sumNanoseconds.load(ordering: .relaxed)) / 1e9
        return Snapshot(bounds: bounds, cumulativeCounts: cumulative, sum: sum)
    }

    /// A histogram's counts at one moment, in Prometheus' shape: cumulative counts per upper bound.
    package struct Snapshot: Sendable, Hashable {
        /// The upper bounds (seconds, or whatever unit the histogram counts), ascending, without `+Inf`.
        package var bounds: [Double]
        /// Observations ≤ each bound, then the total (for `+Inf`): `bounds.count + 1` values, non-decreasing.
        package var cumulativeCounts: [Int64]
        /// The sum of the observations.
        package var sum: Double

        package init(bounds: [Double], cumulativeCounts: [Int64], sum: Double) {
            precondition(cumulativeCounts.count == bounds.count + 1, "one count per bound, then +Inf")
            self.bounds = bounds
            self.cumulativeCounts = cumulativeCounts
            self.sum = sum
        }

        /// How many observations there were.
        package var count: Int64 { cumulativeCounts.last ?? 0 }
    }
}
