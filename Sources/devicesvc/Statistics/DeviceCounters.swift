import ContextBusSupport
import ContextBusWire

/// What devicesvc counts of its own work, for `device.stats` and its metrics: chains by outcome (failures by the
/// error code they were answered with), links set up, watches' reconnect attempts, recordings saved or failed.
final class DeviceCounters: Sendable {
    private let state = Locked(Counts())

    struct Counts: Sendable, Hashable {
        var chainsStarted: Int64 = 0
        var chainsSucceeded: Int64 = 0
        var chainsCancelled: Int64 = 0
        var chainsFailed: [Int: Int64] = [:]
        var connects: Int64 = 0
        var reconnects: Int64 = 0
        var recordingsSaved: Int64 = 0
        var recordingsFailed: Int64 = 0
    }

    var counts: Counts { state.withLock { $0 } }

    /// A chain was accepted.
    func chainStarted() { state.withLock { $0.chainsStarted += 1 } }

    /// A chain ended: succeeded (`nil`), or answered with `error`'s code (`499` counts as cancelled).
    func chainEnded(failingWith error: RPCError?) {
        state.withLock { counts in
            guard let error else { return counts.chainsSucceeded += 1 }
            if error.code == .cancelled {
                counts.chainsCancelled += 1
            } else {
                counts.chainsFailed[error.code.rawValue, default: 0] += 1
            }
        }
    }

    /// A chain's `connect` step set up a link.
    func linkConnected() { state.withLock { $0.connects += 1 } }

    /// A watch's link began a reconnect attempt.
    func reconnectAttempted() { state.withLock { $0.reconnects += 1 } }

    /// A chain's recording was saved into storesvc, or was not.
    func recorded(succeeded: Bool) {
        state.withLock { counts in
            if succeeded { counts.recordingsSaved += 1 } else { counts.recordingsFailed += 1 }
        }
    }
}
