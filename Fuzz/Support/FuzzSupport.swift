// Helpers shared by the fuzz harnesses (compiled into every harness; see docs/fuzzing.md).

/// Stops the run with `message` when `condition` is false: libFuzzer records the input that
/// broke the property as a crash, exactly as it does for a trap inside the code under test.
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("fuzz property violated: \(message())")
    }
}

/// A small deterministic generator (SplitMix64), seeded from the input so that a crashing
/// input replays exactly.
struct FuzzRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// Seeds from every byte of `bytes` (FNV-1a), so that any change to the input changes the sequence.
    init(hashing bytes: some Sequence<UInt8>) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        state = hash
    }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (`bound` > 0).
    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}

/// The input as an array (libFuzzer passes a pointer that may be null when `size` is 0).
func fuzzBytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
    guard let data, size > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: data, count: size))
}
