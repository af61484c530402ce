import Foundation

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire

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

/// Equality that treats an `.int` and a `.double` of the same numeric value as equal, because
/// Foundation's `JSONEncoder` writes `5.0` as `5`.
func numericallyEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.int(let x), .int(let y)): return x == y
    case (.int, .double), (.double, .int), (.double, .double): return a.doubleValue == b.doubleValue
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(numericallyEqual)
    case (.object(let x), .object(let y)):
        return x.count == y.count && x.allSatisfy { key, value in y[key].map { numericallyEqual(value, $0) } ?? false }
    default: return a == b
    }
}

/// Random property values and names, for envelope comparisons.
struct RandomWireValues {
    var generator: SeededGenerator

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func name() -> String {
        let pool = Array("abcdefghijklmnopqrstuvwxyzé\"\\/\n\t\u{0}😀 ")
        return String(
            (0..<Int.random(in: 1...10, using: &generator)).map { _ in pool.randomElement(using: &generator)! })
    }

    mutating func objectID() -> ObjectID {
        ObjectID(
            entity: ["Reading", "Device"].randomElement(using: &generator)!,
            number: Int64.random(in: 1...1_000_000, using: &generator))
    }

    mutating func value(depth: Int = 2) -> JSONValue {
        switch Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &generator) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(Int64.random(in: .min ... .max, using: &generator))
        case 3:
            while true {
                let d = Double(bitPattern: generator.next())
                if d.isFinite { return .double(d) }
            }
        case 4: return .double(Double(Int.random(in: -100_000...100_000, using: &generator)) / 100)
        case 5, 6: return .string(name())
        case 7: return .array((0..<Int.random(in: 0...3, using: &generator)).map { _ in value(depth: depth - 1) })
        default: return .object(values(depth: depth - 1))
        }
    }

    mutating func values(depth: Int = 2) -> [String: JSONValue] {
        var values: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...5, using: &generator) { values[name()] = value(depth: depth) }
        return values
    }
}
