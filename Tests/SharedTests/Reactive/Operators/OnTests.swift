import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct OnTests {
    @Test func sideEffectsRunInOrderBeforeEventsArePassedOn() {
        let log = Locked<[String]>([])
        let record: @Sendable (String) -> Void = { entry in log.withLock { $0.append(entry) } }
        Signal<Int, Never>(value: 1)
            .on(
                starting: { record("starting") }, started: { record("started") },
                value: { record("value \($0)") }, completed: { record("completed") },
                terminated: { record("terminated") }, disposed: { record("disposed") }
            )
            .start(Observer(value: { record("observer \($0)") }, completed: { record("observer completed") }))
        expectEqual(
            log.withLock { $0 },
            [
                "starting", "value 1", "observer 1", "completed", "terminated", "disposed", "observer completed",
                "started",
            ])
    }

    @Test func failedAndInterruptedHaveTheirOwnCallbacks() {
        let failed = Counter()
        let interrupted = Counter()
        let terminated = Counter()
        Signal<Int, TestError>(error: .boom)
            .on(failed: { _ in failed.increment() }, terminated: { terminated.increment() })
            .start(Observer())
        Signal<Int, TestError>.never
            .on(interrupted: { interrupted.increment() }, terminated: { terminated.increment() })
            .start(Observer())
            .dispose()
        expectEqual(failed.value, 1)
        expectEqual(interrupted.value, 1)
        expectEqual(terminated.value, 2)
    }
}
