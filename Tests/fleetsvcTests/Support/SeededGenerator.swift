import Foundation

@testable import ContextBusSupport

/// A reproducible pseudo-random generator (SplitMix64): a failing randomised test prints its seed, and the same
/// seed replays the same choices.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// The seed from the environment variable `name` when it holds a number, else a fresh random one.
    static func seed(fromEnvironment name: String) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[name], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 1...UInt64.max)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// Runs blocking `work` on a thread of its own and waits for it without holding a thread of the cooperative pool.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withLockedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
