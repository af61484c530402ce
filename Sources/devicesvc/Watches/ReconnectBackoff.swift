import ContextBusWire

/// The delays between a watch's reconnect attempts: the first about `minMs`, each next one doubled, each with up to
/// 20 % jitter either way, never more than `maxMs`.
///
/// With the defaults (500 ms, 30 s): about 0.5, 1, 2, 4, 8, 16 s, then 30 s (between 24 and 30 s) for ever. The jitter
/// keeps gateways that lost the same devices at once (a power cut) from reconnecting in step.
struct ReconnectBackoff: Sendable, Hashable {
    var policy: ReconnectPolicy

    /// The jitter, as a share of the delay either way.
    static let jitter = 0.2

    /// The delay before attempt `attempt` (1-based, counted since the link was lost).
    ///
    /// - Parameter unit: A number in `0..<1` (random in the service, fixed in tests) that picks the jitter.
    func delay(beforeAttempt attempt: Int, unit: Double) -> Duration {
        let doublings = min(max(attempt - 1, 0), 40)
        let base = min(Double(policy.minMs) * pow2(doublings), Double(policy.maxMs))
        let jittered = base * (1 + Self.jitter * (2 * min(max(unit, 0), 1) - 1))
        let milliseconds = min(max(jittered, 1), Double(policy.maxMs))
        return .microseconds(Int64((milliseconds * 1000).rounded()))
    }

    private func pow2(_ exponent: Int) -> Double {
        Double(sign: .plus, exponent: exponent, significand: 1)
    }
}
