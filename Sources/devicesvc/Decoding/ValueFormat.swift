/// How the bytes of a value become a number: the one place that reads integers out of characteristic values and
/// advertised objects (GATT characteristics, `--decode` formats, BTHome objects).
enum ValueFormat: Sendable, Hashable, CustomStringConvertible {
    /// A little-endian integer of `size` bytes (1 to 4) at byte `offset`, signed or not, times `factor`; `unknown` is
    /// the raw value the format reserves for "not known" (`0x8000` for a GATT temperature), which decodes to nothing.
    case integer(size: Int, signed: Bool, factor: Double = 1, offset: Int = 0, unknown: Int64? = nil)
    /// An IEEE 754 single-precision float, little-endian, at byte `offset`, times `factor`.
    case float32(factor: Double = 1, offset: Int = 0)
    /// Heart Rate Measurement (`2a37`): a flags byte whose bit 0 says whether the rate that follows is a `uint8` or a
    /// `uint16` (GATT Specification Supplement, 3.113).
    case heartRateMeasurement

    /// The number the bytes hold, or `nil` when they are too short (or hold the format's "unknown" value).
    func decode(_ bytes: [UInt8]) -> Double? {
        switch self {
        case .integer(let size, let signed, let factor, let offset, let unknown):
            guard let raw = Self.integer(bytes, at: offset, size: size, signed: signed), raw != unknown else {
                return nil
            }
            return Double(raw) * factor
        case .float32(let factor, let offset):
            guard let raw = Self.integer(bytes, at: offset, size: 4, signed: false) else { return nil }
            let value = Double(Float(bitPattern: UInt32(raw)))
            return value.isFinite ? value * factor : nil
        case .heartRateMeasurement:
            guard let flags = bytes.first else { return nil }
            let format = ValueFormat.integer(size: flags & 1 == 0 ? 1 : 2, signed: false, offset: 1)
            return format.decode(bytes)
        }
    }

    /// How many bytes the format reads from its offset on (the heart rate measurement: its flags and rate).
    var size: Int {
        switch self {
        case .integer(let size, _, _, _, _): return size
        case .float32: return 4
        case .heartRateMeasurement: return 2
        }
    }

    /// The little-endian integer of `size` bytes at `offset`, sign-extended when `signed`.
    static func integer(_ bytes: [UInt8], at offset: Int, size: Int, signed: Bool) -> Int64? {
        guard (1...4).contains(size), offset >= 0, bytes.count >= offset + size else { return nil }
        var raw: UInt64 = 0
        for index in 0..<size { raw |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        guard signed, raw & (1 << (8 * UInt64(size) - 1)) != 0 else { return Int64(raw) }
        return Int64(raw) - Int64(1) << (8 * Int64(size))
    }

    var description: String {
        switch self {
        case .integer(let size, let signed, let factor, let offset, _):
            var text = (signed ? "sint" : "uint") + String(size * 8)
            if offset != 0 { text += "@\(offset)" }
            if factor != 1 { text += "*\(factor)" }
            return text
        case .float32(let factor, let offset):
            var text = "float32"
            if offset != 0 { text += "@\(offset)" }
            if factor != 1 { text += "*\(factor)" }
            return text
        case .heartRateMeasurement:
            return "heart-rate-measurement"
        }
    }
}

/// A number decoded from a value, with its unit (`87.0 %`, `21.5 °C`); `unit` is `nil` for unitless values.
struct Quantity: Sendable, Hashable {
    var number: Double
    var unit: String?
}
