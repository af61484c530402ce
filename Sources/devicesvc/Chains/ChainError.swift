import ContextBusWire

/// Why a chain stopped at a step.
enum ChainFailureReason: Sendable, Hashable, CustomStringConvertible {
    /// Bluetooth failed: a BlueZ error, link loss, services that never resolved, BlueZ gone.
    case device(DeviceError)
    /// The step ran longer than its `timeoutMs`.
    case stepTimedOut(Duration)
    /// The chain ran longer than its `timeoutMs`.
    case chainTimedOut(Duration)
    /// `device.cancel`, the client's `bus.cancel`, its disconnection, or the service stopping.
    case cancelled

    var description: String {
        switch self {
        case .device(let error): return error.description
        case .stepTimedOut(let after): return "the step did not finish within \(after.milliseconds) ms"
        case .chainTimedOut(let after): return "the chain did not finish within \(after.milliseconds) ms"
        case .cancelled: return "the chain was cancelled"
        }
    }
}

/// A step that failed, before the chain turns it into a `ChainError` with the results so far.
struct StepFailure: Error, Sendable, Hashable {
    let step: Int
    let reason: ChainFailureReason
}

/// How a chain failed: which chain, at which step, why, and what the steps before produced.
///
/// Its `rpcError` is the answer to `device.run` (docs/protocol.md): `502` for Bluetooth failures with `data.bluez`
/// naming BlueZ's error, `408` for timeouts, `499` for cancellation, `503` when BlueZ is not on the bus, `404`
/// for a device or characteristic BlueZ does not know; `data` is always a `ChainFailure`.
struct ChainError: Error, Sendable, Hashable, CustomStringConvertible {
    let chain: String
    let step: Int
    let reason: ChainFailureReason
    let results: [StepResult]

    var description: String { "chain \(chain) failed at step \(step): \(reason)" }

    /// The protocol's `data` for the error.
    var failure: ChainFailure {
        var bluez: String?
        if case .device(let error) = reason { bluez = error.bluezName }
        return ChainFailure(chain: chain, step: step, bluez: bluez, results: results)
    }

    /// The answer to `device.run`.
    var rpcError: RPCError {
        let message = "step \(step): \(reason)"
        switch reason {
        case .stepTimedOut, .chainTimedOut:
            return .timeout(message, failure: failure)
        case .cancelled:
            return .cancelled(message, failure: failure)
        case .device(let error):
            switch error {
            case .bluez, .linkLost, .servicesNotResolved:
                return .deviceError(message, failure: failure)
            case .noReply:
                return .timeout(message, failure: failure)
            case .unavailable:
                return RPCError(code: .unavailable, message: message, data: failure.json)
            case .unknownDevice, .unknownCharacteristic, .unknownDescriptor:
                return .notFound(message, data: failure.json)
            }
        }
    }
}
