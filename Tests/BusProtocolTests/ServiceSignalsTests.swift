import Dispatch
@preconcurrency import Glibc
import Shared
import Testing

@testable import BusProtocol

@Suite struct ServiceSignalsTests {
    @Test func aWatchedSignalIsDeliveredToTheHandlerInsteadOfItsDefaultAction() {
        let received = Locked<[Int32]>([])
        let delivered = DispatchSemaphore(value: 0)
        let signals = ServiceSignals(signals: [SIGUSR2], queue: DispatchQueue(label: "signals")) { number in
            received.withLock { $0.append(number) }
            delivered.signal()
        }
        // SIGUSR2's default action terminates the process: this test only survives if it is handled.
        kill(getpid(), SIGUSR2)
        #expect(delivered.wait(timeout: .now() + 20) == .success)
        #expect(received.withLock { $0 } == [SIGUSR2])
        signals.cancel()
    }
}
