import ContextBusSupport
import ContextBusWire

/// What one running chain has done so far: the step it is at, the results of finished steps, and whether
/// it needs a disconnect if it fails. Shared by the chain's step signals (which write) and its failure path
/// (which reads).
final class ChainRecord: Sendable {
    private let state = Locked(State())

    private struct State {
        var currentStep = 0
        var results: [StepResult] = []
        var mayBeConnected = false
    }

    /// The step running now (or the last one started).
    var currentStep: Int { state.withLock { $0.currentStep } }
    /// The results of the steps that finished, in order.
    var results: [StepResult] { state.withLock { $0.results } }
    /// Whether a `Connect` went out to BlueZ and no `disconnect` step succeeded since: a failure must disconnect
    /// (BlueZ's `Disconnect` also aborts a link set-up still under way). A connect step that failed while it
    /// waited for the adapter's turn sent nothing, and leaves the device alone.
    var needsDisconnect: Bool { state.withLock { $0.mayBeConnected } }

    func begin(_ step: Int) {
        state.withLock { $0.currentStep = step }
    }

    /// A connect step's attempt is going out to BlueZ now.
    func connectAttempted() {
        state.withLock { $0.mayBeConnected = true }
    }

    /// A disconnect step succeeded: the device is not connected (until the next connect step's attempt).
    func disconnected() {
        state.withLock { $0.mayBeConnected = false }
    }

    func finish(_ result: StepResult) {
        state.withLock { $0.results.append(result) }
    }
}
