import Dispatch
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct DisposableTests {
    @Test func actionDisposableRunsItsActionExactlyOnceUnderConcurrentDisposal() {
        let runs = Counter()
        let disposable = AnyDisposable { runs.increment() }
        expectFalse(disposable.isDisposed)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in disposable.dispose() }
        expectEqual(runs.value, 1)
        expectTrue(disposable.isDisposed)
    }

    @Test func compositeDisposesEverythingInInsertionOrder() {
        let order = Locked<[Int]>([])
        let composite = CompositeDisposable()
        composite.add(AnyDisposable { order.withLock { $0.append(1) } })
        composite.add { order.withLock { $0.append(2) } }
        composite += AnyDisposable { order.withLock { $0.append(3) } }
        composite.dispose()
        composite.dispose()
        expectEqual(order.withLock { $0 }, [1, 2, 3])
    }

    @Test func addingToADisposedCompositeDisposesAtOnce() {
        let composite = CompositeDisposable()
        composite.dispose()
        let late = AnyDisposable()
        expectNil(composite.add(late))
        expectTrue(late.isDisposed)
    }

    @Test func removingFromACompositeKeepsTheDisposableAlive() {
        let composite = CompositeDisposable()
        let kept = AnyDisposable()
        let removal = composite.add(kept)
        removal?.dispose()
        composite.dispose()
        expectFalse(kept.isDisposed)
    }

    @Test func serialDisposableDisposesWhatItReplaces() {
        let serial = SerialDisposable()
        let first = AnyDisposable()
        let second = AnyDisposable()
        serial.inner = first
        serial.inner = second
        expectTrue(first.isDisposed)
        expectFalse(second.isDisposed)
        serial.dispose()
        expectTrue(second.isDisposed)
        let third = AnyDisposable()
        serial.inner = third
        expectTrue(third.isDisposed)
    }

    @Test func scopedDisposableDisposesWhenReleased() {
        let inner = AnyDisposable()
        do {
            let scoped = inner.scoped()
            expectFalse(scoped.isDisposed)
        }
        expectTrue(inner.isDisposed)
    }
}
