import ContextBusWire
import Foundation

/// What a running chain sends: each notification as it arrives, and each step's result as it finishes.
///
/// `device.run` turns each into a `device.step` event: a `notification` into one with the value, a
/// `finished` into one with the read value (or none), so that a notify step's events are its notifications
/// followed by one without a value.
enum ChainProgress: Sendable, Hashable {
    /// One notification of the notify step `step`.
    case notification(step: Int, value: Data)
    /// Step `result.step` finished.
    case finished(StepResult)

    /// The `device.step` event for this progress of chain `chain`.
    func event(chain: String) -> StepEvent {
        switch self {
        case .notification(let step, let value):
            return StepEvent(chain: chain, step: step, operation: .notify, value: value)
        case .finished(let result):
            return StepEvent(
                chain: chain, step: result.step, operation: result.operation,
                value: result.operation == .read ? result.value : nil)
        }
    }
}
