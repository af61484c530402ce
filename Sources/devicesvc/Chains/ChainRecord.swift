import BusProtocol
import Shared

/// What one running chain has done so far: the step it is at, the results of finished steps, and whether
/// it needs a disconnect if it fails. Shared by the chain's step signals (which write) and its failure path
/// (which reads).
final class ChainRecord: Sendable {
    private let state = Locked(State())

    private struct State {
        var currentStep = 0
        var results: [StepResult] = []
        var isConnected = false
    }

    /// The step running now (or the last one started).
    var currentStep: Int { state.withLock { $0.currentStep } }
    /// The results of the steps that finished, in order.
    var results: [StepResult] { state.withLock { $0.results } }
    /// Whether a `connect` step started and no `disconnect` step finished since: a failure must disconnect.
    var needsDisconnect: Bool { state.withLock { $0.isConnected } }

    func begin(_ step: Int, _ operation: StepOperation) {
        state.withLock { state in
            state.currentStep = step
            if operation == .connect { state.isConnected = true }
        }
    }

    func finish(_ result: StepResult) {
        state.withLock { state in
            state.results.append(result)
            if result.operation == .disconnect { state.isConnected = false }
        }
    }
}
