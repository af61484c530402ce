import Foundation
import TestSupport
import Testing

@testable import ContextBusWire

struct ChainStepTests {
    @Test func thereIsOneKindOfStepPerOperationInTheSameOrder() {
        expectEqual(ChainStep.kinds.map { $0.operation }, StepOperation.allCases)
        for operation in StepOperation.allCases {
            expectEqual(ChainStep.kind(of: operation).operation, operation)
        }
    }

    @Test func stepsOfDifferentKindsOrMembersAreUnequal() {
        let battery = BluetoothUUID("2a19")!
        expectEqual(
            ChainStep.read(characteristic: battery, timeoutMs: 5),
            ChainStep(ReadStep(characteristic: battery, timeoutMs: 5)))
        expectNotEqual(
            ChainStep.read(characteristic: battery, timeoutMs: 5), .read(characteristic: battery, timeoutMs: 6))
        expectNotEqual(ChainStep.connect(timeoutMs: nil), .disconnect)
        expectEqual(Set([ChainStep.disconnect, .disconnect, .wait(ms: 1)]).count, 2)
    }

    @Test func onlyStepsOnACharacteristicHaveOne() {
        let battery = BluetoothUUID("2a19")!
        let steps: [ChainStep] = [
            .connect(timeoutMs: 1), .read(characteristic: battery, timeoutMs: nil),
            .write(characteristic: battery, value: Data(), response: false, timeoutMs: nil),
            .notify(characteristic: battery, count: 1, timeoutMs: nil), .wait(ms: 1), .disconnect,
        ]
        expectEqual(steps.map(\.characteristic), [nil, battery, battery, battery, nil, nil])
        expectEqual(steps.map(\.timeoutMs), [1, nil, nil, nil, nil, nil])
    }

    @Test func aNotificationIsAnEventWithAValueOfANotifyStep() {
        expectTrue(StepEvent(chain: "c-1", step: 0, operation: .notify, value: Data([1])).isNotification)
        expectFalse(StepEvent(chain: "c-1", step: 0, operation: .notify).isNotification)
        expectFalse(StepEvent(chain: "c-1", step: 0, operation: .read, value: Data([1])).isNotification)
    }
}
