import Dispatch

/// A point in a scheduler's time, in nanoseconds since that scheduler's epoch.
///
/// Real schedulers (`QueueScheduler`, `PerformScheduler`) count from the system's monotonic clock (the epoch of
/// `DispatchTime`), so their times are comparable with each other. A `TestScheduler` counts virtual time from
/// zero. Arithmetic saturates instead of overflowing, so a hostile `Duration` cannot trap.
public struct SchedulerTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Nanoseconds since the scheduler's epoch.
    public let nanoseconds: Int64

    /// A time `nanoseconds` after the epoch.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// The epoch itself.
    public static let zero = SchedulerTime(nanoseconds: 0)

    /// The latest representable time: "never" for practical purposes.
    public static let distantFuture = SchedulerTime(nanoseconds: .max)

    /// The current time of the monotonic clock that real schedulers use.
    public static var monotonicNow: SchedulerTime {
        SchedulerTime(nanoseconds: Int64(clamping: DispatchTime.now().uptimeNanoseconds))
    }

    /// This time as a dispatch deadline (for real schedulers).
    var dispatchTime: DispatchTime {
        DispatchTime(uptimeNanoseconds: UInt64(Swift.max(nanoseconds, 1)))
    }

    public static func < (lhs: SchedulerTime, rhs: SchedulerTime) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The time `duration` later (saturating).
    public static func + (time: SchedulerTime, duration: Duration) -> SchedulerTime {
        let (sum, overflow) = time.nanoseconds.addingReportingOverflow(duration.saturatingNanoseconds)
        if overflow { return duration > .zero ? .distantFuture : SchedulerTime(nanoseconds: .min) }
        return SchedulerTime(nanoseconds: sum)
    }

    /// The time `duration` earlier (saturating).
    public static func - (time: SchedulerTime, duration: Duration) -> SchedulerTime {
        time + (.zero - duration)
    }

    /// The duration from `rhs` to `lhs` (saturating).
    public static func - (lhs: SchedulerTime, rhs: SchedulerTime) -> Duration {
        let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
        if overflow { return .nanoseconds(lhs > rhs ? Int64.max : Int64.min) }
        return .nanoseconds(difference)
    }

    public var description: String {
        let seconds = Double(nanoseconds) / 1e9
        return "t=\(seconds)s"
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to the range of `Int64`.
    var saturatingNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflow2 { return seconds > 0 ? .max : .min }
        return total
    }

    /// This duration, or zero if it is negative.
    var clampedToNonNegative: Duration {
        self < .zero ? .zero : self
    }
}
