import Foundation
import TestSupport
import Testing

@testable import ContextBusWire
@testable import devicesvc

struct RunnableStepTests {
    @Test func everyKindOfStepRuns() {
        for kind in ChainStep.kinds {
            expectTrue(kind is any RunnableStep.Type, "\(kind) is not a RunnableStep")
        }
    }

    @Test func onlyAWaitIsNotBoundedByTheStepTimeout() {
        let steps: [ChainStep] = [
            .connect(timeoutMs: nil), .read(characteristic: BluetoothUUID("2a19")!, timeoutMs: nil),
            .write(characteristic: BluetoothUUID("2a19")!, value: Data([1]), response: true, timeoutMs: nil),
            .notify(characteristic: BluetoothUUID("2a19")!, count: 1, timeoutMs: nil), .wait(ms: 1), .disconnect,
        ]
        expectEqual(steps.map(\.runnable.isBoundedByStepTimeout), [true, true, true, true, false, true])
    }
}
