import ContextBusWire
import Foundation

/// The formats of characteristic values devicesvc decodes into `number`/`unit`, by characteristic: the one table that
/// `read` and `notify` steps, watches and recordings look values up in.
///
/// It starts as `standard` (the GATT formats PROTOCOL.md lists) and takes more from the command line,
/// `devicesvc --decode UUID=FORMAT[@OFFSET][*FACTOR][:UNIT]` (`parse(_:)`), which may also replace a standard entry.
/// Decoding never replaces the raw bytes: a value whose bytes do not fit its format (too short, or the format's
/// "unknown" value) simply has no number.
struct CharacteristicDecoders: Sendable, Hashable {
    /// One entry: what the value is called, its format and its unit.
    struct Entry: Sendable, Hashable {
        var name: String
        var format: ValueFormat
        var unit: String?
    }

    /// By lowercase 128-bit UUID.
    private(set) var entries: [String: Entry]

    /// Battery Level `2a19` (uint8, %), Temperature `2a6e` (sint16, 0.01 °C, `0x8000` unknown), Humidity `2a6f`
    /// (uint16, 0.01 %, `0xffff` unknown), Heart Rate Measurement `2a37` (uint8 or uint16 after its flags, bpm).
    static let standard = CharacteristicDecoders(entries: [
        "2a19": Entry(name: "battery", format: .integer(size: 1, signed: false), unit: "%"),
        "2a6e": Entry(
            name: "temperature", format: .integer(size: 2, signed: true, factor: 0.01, unknown: -0x8000), unit: "°C"),
        "2a6f": Entry(
            name: "humidity", format: .integer(size: 2, signed: false, factor: 0.01, unknown: 0xFFFF), unit: "%"),
        "2a37": Entry(name: "heart rate", format: .heartRateMeasurement, unit: "bpm"),
    ])

    private init(entries: [String: Entry]) {
        self.entries = [:]
        for (short, entry) in entries {
            guard let uuid = BluetoothUUID(short) else { continue }
            self.entries[uuid.canonical] = entry
        }
    }

    /// Adds (or replaces) the entry for `uuid`.
    mutating func set(_ entry: Entry, for uuid: BluetoothUUID) {
        entries[uuid.canonical] = entry
    }

    /// The entry for a characteristic, if its format is known.
    func entry(for uuid: BluetoothUUID) -> Entry? {
        entries[uuid.canonical]
    }

    /// The value decoded, when the characteristic's format is known and the bytes fit it.
    func decode(_ value: Data, of uuid: BluetoothUUID) -> Quantity? {
        guard let entry = entries[uuid.canonical], let number = entry.format.decode(Array(value)) else { return nil }
        return Quantity(number: number, unit: entry.unit)
    }

    // MARK: - The command line

    /// Why a `--decode` value was refused.
    struct SpecError: Error, Hashable, CustomStringConvertible {
        var description: String
    }

    /// Reads `UUID=FORMAT[@OFFSET][*FACTOR][:UNIT]`: `FORMAT` is `uint8`, `sint8`, `uint16`, `sint16`, `uint24`,
    /// `sint24`, `uint32`, `sint32` or `float32` (little-endian), `OFFSET` the byte it starts at (default 0), `FACTOR`
    /// what the raw number is multiplied by (default 1). For example `c0defeed-0002-4000-8000-000000000000=uint16*0.1:V`.
    static func parse(_ text: String) throws(SpecError) -> (BluetoothUUID, Entry) {
        guard let equals = text.firstIndex(of: "=") else {
            throw SpecError(description: "expected UUID=FORMAT[@OFFSET][*FACTOR][:UNIT], e.g. 2a6e=sint16*0.01:°C")
        }
        let uuidText = String(text[..<equals])
        guard let uuid = BluetoothUUID(uuidText) else {
            throw SpecError(description: "'\(uuidText)' is not a UUID (16-bit like 2a19, or 128-bit)")
        }
        var rest = Substring(text[text.index(after: equals)...])
        var unit: String?
        if let colon = rest.firstIndex(of: ":") {
            unit = String(rest[rest.index(after: colon)...])
            rest = rest[..<colon]
            if unit?.isEmpty == true { unit = nil }
        }
        var factor = 1.0
        if let star = rest.firstIndex(of: "*") {
            let factorText = rest[rest.index(after: star)...]
            guard let value = Double(factorText), value.isFinite, value != 0 else {
                throw SpecError(description: "'\(factorText)' is not a factor (a number other than 0)")
            }
            factor = value
            rest = rest[..<star]
        }
        var offset = 0
        if let at = rest.firstIndex(of: "@") {
            let offsetText = rest[rest.index(after: at)...]
            guard let value = Int(offsetText), (0...511).contains(value) else {
                throw SpecError(description: "'\(offsetText)' is not a byte offset (0 to 511)")
            }
            offset = value
            rest = rest[..<at]
        }
        let format: ValueFormat
        switch rest {
        case "float32": format = .float32(factor: factor, offset: offset)
        case "uint8", "sint8", "uint16", "sint16", "uint24", "sint24", "uint32", "sint32":
            let bits = Int(rest.dropFirst(4)) ?? 8
            format = .integer(size: bits / 8, signed: rest.hasPrefix("s"), factor: factor, offset: offset)
        default:
            throw SpecError(
                description: "'\(rest)' is not a format: uint8, sint8, uint16, sint16, uint24, sint24, uint32, "
                    + "sint32 or float32")
        }
        return (uuid, Entry(name: uuid.string, format: format, unit: unit))
    }
}
