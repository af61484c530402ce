import Shared
import TestSupport
import Testing

@Suite struct LifetimeTests {
    @Test func tokenEndsTheLifetimeWhenReleased() {
        let ended = Counter()
        var token: Lifetime.Token? = nil
        do {
            let made = Lifetime.make()
            token = made.token
            made.lifetime.observeEnded { ended.increment() }
            #expect(!made.lifetime.hasEnded)
        }
        expectEqual(ended.value, 0)
        token = nil
        #expect(token == nil)
        expectEqual(ended.value, 1)
    }

    @Test func observingAnEndedLifetimeRunsAtOnce() {
        let ended = Counter()
        #expect(Lifetime.empty.hasEnded)
        #expect(Lifetime.empty.observeEnded { ended.increment() } == nil)
        expectEqual(ended.value, 1)
    }

    @Test func anUnregisteredObservationDoesNotRun() {
        let (lifetime, token) = Lifetime.make()
        let ended = Counter()
        lifetime.observeEnded { ended.increment() }?.dispose()
        token.end()
        expectEqual(ended.value, 0)
        #expect(lifetime.hasEnded)
    }

    @Test func disposablesAddedToALifetimeAreDisposedWhenItEnds() {
        let (lifetime, token) = Lifetime.make()
        let disposable = AnyDisposable()
        lifetime += disposable
        #expect(!disposable.isDisposed)
        token.end()
        #expect(disposable.isDisposed)
    }

    @Test func takeDuringCompletesWhenTheLifetimeEnds() {
        let (lifetime, token) = Lifetime.make()
        let recorder = EventRecorder<Int, Never>()
        Signal<Int, Never>.never.take(during: lifetime).start(recorder.observer)
        #expect(recorder.events.isEmpty)
        token.end()
        expectEqual(recorder.events, [.completed])
    }
}
