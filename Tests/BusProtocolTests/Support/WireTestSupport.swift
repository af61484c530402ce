import BusProtocol
import Foundation
import Shared

/// A deterministic random source (SplitMix64) so that property tests fail the same way every run.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Parses JSON text that the test itself wrote; a failure is a bug in the test.
func json(_ text: String) -> JSONValue {
    do {
        return try JSONParser().parse(text)
    } catch {
        fatalError("test JSON does not parse: \(error)\n\(text)")
    }
}

/// A frame built by hand: big-endian length, then the payload.
func frame(_ payload: [UInt8]) -> [UInt8] {
    let n = UInt32(payload.count)
    return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + payload
}

func frame(_ text: String) -> [UInt8] {
    frame(Array(text.utf8))
}

/// The `invalidParams` field path of the error `body` throws, or `nil` when it throws nothing
/// (or something else).
func invalidField(_ body: () throws(RPCError) -> Void) -> String? {
    do {
        try body()
        return nil
    } catch {
        return error.code == .invalidParams ? error.field : "<code \(error.code.rawValue)>"
    }
}
