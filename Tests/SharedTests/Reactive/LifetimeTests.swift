import TestSupport
import Testing

@testable import ContextBusReactive

struct LifetimeTests {
    @Test func tokenEndsTheLifetimeWhenReleased() {
        let ended = Counter()
        var token: Lifetime.Token? = nil
        do {
            let made = Lifetime.make()
            token = made.token
            made.lifetime.observeEnded { ended.increment() }
            expectFalse(made.lifetime.hasEnded)
        }
        expectEqual(ended.value, 0)
        token = nil
        expectNil(token)
        expectEqual(ended.value, 1)
    }

    @Test func observingAnEndedLifetimeRunsAtOnce() {
        let ended = Counter()
        expectTrue(Lifetime.empty.hasEnded)
        expectNil(Lifetime.empty.observeEnded { ended.increment() })
        expectEqual(ended.value, 1)
    }

    @Test func anUnregisteredObservationDoesNotRun() {
        let (lifetime, token) = Lifetime.make()
        let ended = Counter()
        lifetime.observeEnded { ended.increment() }?.dispose()
        token.end()
        expectEqual(ended.value, 0)
        expectTrue(lifetime.hasEnded)
    }

    @Test func disposablesAddedToALifetimeAreDisposedWhenItEnds() {
        let (lifetime, token) = Lifetime.make()
        let disposable = AnyDisposable()
        lifetime += disposable
        expectFalse(disposable.isDisposed)
        token.end()
        expectTrue(disposable.isDisposed)
    }

    @Test func takeDuringCompletesWhenTheLifetimeEnds() {
        let (lifetime, token) = Lifetime.make()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>.never.take(during: lifetime).start(recorder.observer)
        expectEmpty(recorder.events)
        token.end()
        expectEqual(recorder.events, [.completed])
    }
}
