import Foundation

@testable import ContextBusSupport

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

/// Random JSON documents covering every case of `JSONValue` and the awkward corners of strings and numbers.
struct RandomJSON {
    var generator: SeededGenerator

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    mutating func document(maximumDepth: Int = 5) -> JSONValue {
        Bool.random(using: &generator) ? object(depth: maximumDepth) : array(depth: maximumDepth)
    }

    mutating func value(depth: Int) -> JSONValue {
        let choice = Int.random(in: 0..<(depth > 0 ? 9 : 7), using: &generator)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &generator))
        case 2: return .int(integer())
        case 3: return .double(double())
        case 4, 5, 6: return .string(string())
        case 7: return array(depth: depth - 1)
        default: return object(depth: depth - 1)
        }
    }

    mutating func array(depth: Int) -> JSONValue {
        let count = Int.random(in: 0...5, using: &generator)
        return .array((0..<count).map { _ in value(depth: depth) })
    }

    mutating func object(depth: Int) -> JSONValue {
        let count = Int.random(in: 0...5, using: &generator)
        var members: [String: JSONValue] = [:]
        for _ in 0..<count { members[string(maximumLength: 8)] = value(depth: depth) }
        return .object(members)
    }

    mutating func integer() -> Int64 {
        switch Int.random(in: 0..<4, using: &generator) {
        case 0: return Int64.random(in: -10...10, using: &generator)
        case 1: return Int64.random(in: -1_000_000...1_000_000, using: &generator)
        case 2:
            return [Int64.min, Int64.max, Int64.min + 1, Int64.max - 1, 0][Int.random(in: 0..<5, using: &generator)]
        default: return Int64.random(in: .min ... .max, using: &generator)
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<5, using: &generator) {
        case 0: return Double(Int.random(in: -100_000...100_000, using: &generator)) / 1000
        case 1: return Double.random(in: -1...1, using: &generator)
        case 2:
            return [
                0.1, 0.2, 1e-7, .leastNonzeroMagnitude, 2.2250738585072014e-308, 1.7976931348623157e308, 1e21, 1e16,
                3.0, -0.0,
            ][
                Int.random(in: 0..<10, using: &generator)]
        default:
            while true {
                let d = Double(bitPattern: generator.next())
                if d.isFinite { return d }
            }
        }
    }

    mutating func string(maximumLength: Int = 24) -> String {
        let length = Int.random(in: 0...maximumLength, using: &generator)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length { scalars.append(scalar()) }
        return String(scalars)
    }

    mutating func scalar() -> Unicode.Scalar {
        let ranges: [ClosedRange<UInt32>] = [
            0x61...0x7A, 0x20...0x7E, 0x00...0x1F, 0x22...0x22, 0x5C...0x5C, 0x2F...0x2F, 0x7F...0x7F,
            0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF, 0x2028...0x2029,
        ]
        let range = ranges[Int.random(in: 0..<ranges.count, using: &generator)]
        return Unicode.Scalar(UInt32.random(in: range, using: &generator))!
    }
}

/// Converts what `JSONSerialization` returns into a `JSONValue`, keeping Foundation's own typing:
/// booleans stay booleans, floating-point `NSNumber`s become `.double`, integers beyond `Int64` `.double`.
func jsonValue(fromFoundation object: Any) -> JSONValue {
    switch object {
    case is NSNull: return .null
    case let s as String: return .string(s)
    case let array as [Any]: return .array(array.map(jsonValue(fromFoundation:)))
    case let dictionary as [String: Any]: return .object(dictionary.mapValues(jsonValue(fromFoundation:)))
    case let n as NSNumber:
        switch String(cString: n.objCType) {
        case "c", "B": return .bool(n.boolValue)
        case "d", "f": return .double(n.doubleValue)
        case "Q": return n.uint64Value <= UInt64(Int64.max) ? .int(n.int64Value) : .double(n.doubleValue)
        default: return .int(n.int64Value)
        }
    default: fatalError("unexpected Foundation JSON object \(type(of: object))")
    }
}

/// A `JSONValue` as the object graph `JSONSerialization.data(withJSONObject:)` takes.
func foundationObject(from value: JSONValue) -> Any {
    switch value {
    case .null: return NSNull()
    case .bool(let b): return NSNumber(value: b)
    case .int(let i): return NSNumber(value: i)
    case .double(let d): return NSNumber(value: d)
    case .string(let s): return s
    case .array(let a): return a.map(foundationObject(from:))
    case .object(let o): return o.mapValues(foundationObject(from:))
    }
}

/// Equality that treats an `.int` and a `.double` of the same numeric value as equal, because
/// Foundation writes `5.0` as `5` and reads `1.0` into an `Int64` when asked.
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

/// `numericallyEqual`, except that doubles may differ by a relative 1e-14.
///
/// Needed only against `JSONSerialization`: on Linux it reads some doubles a few ULPs away from
/// the correctly rounded value (for example `0.7609870161261654` as `0.7609870161261651`) and
/// large negative integers as doubles. `JSONDecoder` rounds correctly and is compared exactly.
func approximatelyEqual(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.int, .double), (.double, .int), (.double, .double):
        let x = a.doubleValue!
        let y = b.doubleValue!
        return x == y || abs(x - y) <= max(abs(x), abs(y)) * 1e-14
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(approximatelyEqual)
    case (.object(let x), .object(let y)):
        return x.count == y.count
            && x.allSatisfy { key, value in y[key].map { approximatelyEqual(value, $0) } ?? false }
    default: return numericallyEqual(a, b)
    }
}
