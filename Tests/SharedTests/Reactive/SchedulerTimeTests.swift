import TestSupport
import Testing

@testable import ContextBusReactive

struct SchedulerTimeTests {
    @Test func addsAndSubtractsDurations() {
        let time = SchedulerTime(nanoseconds: 1_000)
        expectEqual((time + .microseconds(2)).nanoseconds, 3_000)
        expectEqual((time - .nanoseconds(500)).nanoseconds, 500)
        expectEqual(SchedulerTime(nanoseconds: 5_000) - time, .nanoseconds(4_000))
    }

    @Test func hugeDurationsSaturateInsteadOfTrapping() {
        let time = SchedulerTime(nanoseconds: 10)
        expectEqual(time + .seconds(Int64.max), .distantFuture)
        expectEqual((time - .seconds(Int64.max)).nanoseconds, Int64.min + 10)
        expectEqual((SchedulerTime(nanoseconds: -10) - .seconds(Int64.max)).nanoseconds, .min)
        expectEqual(SchedulerTime.distantFuture - SchedulerTime(nanoseconds: .min), .nanoseconds(Int64.max))
    }

    @Test func ordersByTime() {
        expectLessThan(SchedulerTime.zero, SchedulerTime(nanoseconds: 1))
        expectGreaterThan(SchedulerTime.monotonicNow, .zero)
    }
}
