import Dispatch
import Shared
import TestSupport
import Testing

@Suite struct DisposableTests {
    @Test func actionDisposableRunsItsActionExactlyOnceUnderConcurrentDisposal() {
        let runs = Counter()
        let disposable = AnyDisposable { runs.increment() }
        #expect(!disposable.isDisposed)
        DispatchQueue.concurrentPerform(iterations: 16) { _ in disposable.dispose() }
        expectEqual(runs.value, 1)
        #expect(disposable.isDisposed)
    }

    @Test func compositeDisposesEverythingInInsertionOrder() {
        let order = Locked<[Int]>([])
        let composite = CompositeDisposable()
        composite.add(AnyDisposable { order.withLock { $0.append(1) } })
        composite.add { order.withLock { $0.append(2) } }
        composite += AnyDisposable { order.withLock { $0.append(3) } }
        composite.dispose()
        composite.dispose()
        #expect(order.withLock { $0 } == [1, 2, 3])
    }

    @Test func addingToADisposedCompositeDisposesAtOnce() {
        let composite = CompositeDisposable()
        composite.dispose()
        let late = AnyDisposable()
        #expect(composite.add(late) == nil)
        #expect(late.isDisposed)
    }

    @Test func removingFromACompositeKeepsTheDisposableAlive() {
        let composite = CompositeDisposable()
        let kept = AnyDisposable()
        let removal = composite.add(kept)
        removal?.dispose()
        composite.dispose()
        #expect(!kept.isDisposed)
    }

    @Test func serialDisposableDisposesWhatItReplaces() {
        let serial = SerialDisposable()
        let first = AnyDisposable()
        let second = AnyDisposable()
        serial.inner = first
        serial.inner = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        serial.dispose()
        #expect(second.isDisposed)
        let third = AnyDisposable()
        serial.inner = third
        #expect(third.isDisposed)
    }

    @Test func scopedDisposableDisposesWhenReleased() {
        let inner = AnyDisposable()
        do {
            let scoped = inner.scoped()
            #expect(!scoped.isDisposed)
        }
        #expect(inner.isDisposed)
    }
}
