import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import devicesvc

/// `ChainControl`: who hears a cancellation, and that a listener is let go once its token is disposed.
struct ChainControlTests {
    final class Witness: Sendable {}

    @Test func disposingTheTokenReleasesTheListenerAtOnce() {
        let control = ChainControl()
        weak var released: Witness?
        let token: any Disposable
        do {
            let witness = Witness()
            released = witness
            token = control.listen { _ = witness }
        }
        expectNotNil(released, "the control holds its listener")
        token.dispose()
        expectNil(released, "a finished chain's listener (and what it captures) is freed")
    }

    @Test func onlyTheLatestListenerHearsTheCancellationAndADisposedOneNever() {
        let control = ChainControl()
        let heard = Locked([String]())
        let first = control.listen { heard.withLock { $0.append("first") } }
        let second = control.listen { heard.withLock { $0.append("second") } }
        first.dispose()  // an older token leaves the newer listener in place
        control.cancel()
        control.cancel()
        expectEqual(heard.withLock { $0 }, ["second"])
        second.dispose()
        _ = control.listen { heard.withLock { $0.append("late") } }
        expectEqual(heard.withLock { $0 }, ["second", "late"], "a listener after the cancellation hears it at once")
    }

    @Test func aDisposedListenerIsNotCalled() {
        let control = ChainControl()
        let heard = Locked(0)
        control.listen { heard.withLock { $0 += 1 } }.dispose()
        control.cancel()
        expectEqual(heard.withLock { $0 }, 0)
    }
}
