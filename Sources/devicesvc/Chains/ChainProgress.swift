import ContextBusWire
import Foundation

/// What a running chain sends: each notification as it arrives, and each step's result as it finishes.
///
/// `device.run` turns each into a `device.step` event carrying its `value` (and `number`/`unit` when it decoded): a
/// notification's, or the `value` of a finished step's result, which only a read's result has (a notify step's result
/// has `values` instead), so that a notify step's events are its notifications followed by one without a value. The
/// same values are what a recording saves (`ChainRecording.add`).
enum ChainProgress: Sendable, Hashable {
    /// One notification of the notify step `step`, decoded when its characteristic's format is known.
    case notification(step: Int, value: Data, measurement: Quantity?)
    /// Step `result.step` finished.
    case finished(StepResult)

    /// The index of the step this progress is of.
    var step: Int {
        switch self {
        case .notification(let step, _, _): return step
        case .finished(let result): return result.step
        }
    }

    /// The value a device sent: a notification's, or the value a step read.
    var value: Data? {
        switch self {
        case .notification(_, let value, _): return value
        case .finished(let result): return result.value
        }
    }

    /// `value` decoded, when it was.
    var measurement: Quantity? {
        switch self {
        case .notification(_, _, let measurement): return measurement
        case .finished(let result): return result.number.map { Quantity(number: $0, unit: result.unit) }
        }
    }

    /// The `device.step` event for this progress of chain `chain`.
    func event(chain: String) -> StepEvent {
        switch self {
        case .notification(let step, let value, let measurement):
            return StepEvent(
                chain: chain, step: step, operation: NotifyStep.operation, value: value, number: measurement?.number,
                unit: measurement?.unit)
        case .finished(let result):
            return StepEvent(
                chain: chain, step: result.step, operation: result.operation, value: result.value,
                number: result.number, unit: result.number == nil ? nil : result.unit)
        }
    }
}
