import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// How a value reads in a table or a change line: strings as they are, `-` for null, binary as
/// hexadecimal (when the model says the attribute is binary), arrays comma-separated, other
/// JSON compact.
enum ValueText {
    /// The text of `value`; `type` is the attribute's type when known.
    static func text(_ value: JSONValue, type: AttributeType? = nil) -> String {
        switch value {
        case .null:
            return "-"
        case .string(let text):
            if type == .binary, let data = Data(base64Encoded: text) { return hex(data) }
            return text
        case .bool(let flag):
            return flag ? "true" : "false"
        case .int(let number):
            return String(number)
        case .double(let number):
            return String(number)
        case .array(let items):
            if items.isEmpty { return "[]" }
            if type == nil, items.allSatisfy({ $0.stringValue != nil }) {
                return items.map { text($0) }.joined(separator: ",")
            }
            return compactJSON(value)
        case .object:
            return compactJSON(value)
        }
    }

    /// A decoded number with its unit: `87 %`, `21.5 °C`, `72 bpm` (whole numbers without a fraction).
    static func number(_ number: Double, unit: String?) -> String {
        let text =
            number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        guard let unit, !unit.isEmpty else { return text }
        return "\(text) \(unit)"
    }

    /// Lowercase hexadecimal, two digits per byte (`5a`, `0102ff`).
    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }

    /// `key=value` for change lines, the value quoted (as JSON) when it has spaces or is empty.
    static func pair(_ key: String, _ value: JSONValue, type: AttributeType?) -> String {
        let text = text(value, type: type)
        if text.isEmpty || text.contains(where: { $0 == " " || $0.isNewline }) {
            return "\(key)=\(compactJSON(.string(text)))"
        }
        return "\(key)=\(text)"
    }

    static func compactJSON(_ value: JSONValue) -> String {
        (try? JSONWriter(sortsKeys: true).string(value)) ?? "?"
    }
}
