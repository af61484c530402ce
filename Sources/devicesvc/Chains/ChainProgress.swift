import ContextBusWire
import Foundation

/// What a running chain sends: each notification as it arrives, and each step's result as it finishes.
///
/// `device.run` turns each into a `device.step` event carrying its `value`: a notification's, or the `value` of a
/// finished step's result, which only a read's result has (a notify step's result has `values` instead), so that a
/// notify step's events are its notifications followed by one without a value. The same values are what a
/// recording saves (`ChainRecording.add`).
enum ChainProgress: Sendable, Hashable {
    /// One notification of the notify step `step`.
    case notification(step: Int, value: Data)
    /// Step `result.step` finished.
    case finished(StepResult)

    /// The index of the step this progress is of.
    var step: Int {
        switch self {
        case .notification(let step, _): return step
        case .finished(let result): return result.step
        }
    }

    /// The value a device sent: a notification's, or the value a step read.
    var value: Data? {
        switch self {
        case .notification(_, let value): return value
        case .finished(let result): return result.value
        }
    }

    /// The `device.step` event for this progress of chain `chain`.
    func event(chain: String) -> StepEvent {
        switch self {
        case .notification(let step, let value):
            return StepEvent(chain: chain, step: step, operation: NotifyStep.operation, value: value)
        case .finished(let result):
            return StepEvent(chain: chain, step: result.step, operation: result.operation, value: result.value)
        }
    }
}
