import Foundation

extension ObjectPredicate {
    /// The predicate as a format string that `ObjectPredicate(format:)` reads back to an equal value
    /// (for literals the format can spell: strings, numbers, booleans, `nil`; other values are
    /// written as the strings that coerce to them).
    public var predicateFormat: String {
        switch self {
        case .constant(true): return "TRUEPREDICATE"
        case .constant(false): return "FALSEPREDICATE"
        case .not(let inner): return "NOT " + inner.formatAsOperand
        case .and(let items):
            return items.isEmpty ? "TRUEPREDICATE" : items.map { $0.formatAsOperand }.joined(separator: " AND ")
        case .or(let items):
            return items.isEmpty ? "FALSEPREDICATE" : items.map { $0.formatAsOperand }.joined(separator: " OR ")
        case .comparison(let c): return c.format
        }
    }

    /// Parenthesised when reading it back without parentheses would change the tree.
    private var formatAsOperand: String {
        switch self {
        case .and(let items) where items.count > 1, .or(let items) where items.count > 1:
            return "(" + predicateFormat + ")"
        default:
            return predicateFormat
        }
    }
}

extension ObjectPredicate.Comparison {
    var format: String {
        var text = quantifier.map { $0.rawValue + " " } ?? ""
        text += lhs.format + " " + op.rawValue
        if !options.isEmpty {
            text +=
                "[" + (options.contains(.caseInsensitive) ? "c" : "")
                + (options.contains(.diacriticInsensitive) ? "d" : "") + "]"
        }
        return text + " " + rhs.format
    }
}

extension PredicateOperand {
    /// The expression as it is written in a format string.
    public var format: String {
        switch self {
        case .keyPath(let keys): return keys.map(Self.formatKey).joined(separator: ".")
        case .count(let keys): return keys.map(Self.formatKey).joined(separator: ".") + ".@count"
        case .literal(let value): return Self.formatLiteral(value)
        case .variable(let name): return "$" + name
        case .list(let items): return "{" + items.map(\.format).joined(separator: ", ") + "}"
        }
    }

    private static func formatKey(_ key: String) -> String {
        PredicateParser.keywords.contains(key.uppercased()) ? "#" + key : key
    }

    static func formatLiteral(_ value: PropertyValue) -> String {
        switch value {
        case .null: return "nil"
        case .string(let s): return quote(s)
        case .int(let i): return String(i)
        case .double(let d):
            if d.isNaN { return "nil" }
            if d.isInfinite { return d < 0 ? "-1e999" : "1e999" }
            return "\(d)"
        case .bool(let b): return b ? "TRUE" : "FALSE"
        case .date(let d): return quote(d.rfc3339String)
        case .binary(let data): return quote(data.base64EncodedString())
        case .uuid(let u): return quote(u.uuidString.lowercased())
        case .json(let j):
            switch j {
            case .null: return "nil"
            case .bool(let b): return b ? "TRUE" : "FALSE"
            case .int(let i): return formatLiteral(.int(i))
            case .double(let d): return formatLiteral(.double(d))
            case .string(let s): return quote(s)
            case .array(let items): return "{" + items.map { formatLiteral(.json($0)) }.joined(separator: ", ") + "}"
            case .object: return quote("\(j)")
            }
        case .reference(let id): return quote(id.description)
        case .references(let ids): return "{" + ids.map { quote($0.description) }.joined(separator: ", ") + "}"
        }
    }

    /// A double-quoted string literal; `\` and `"` are escaped, as are control characters.
    static func quote(_ s: String) -> String {
        var text = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\\": text += "\\\\"
            case "\"": text += "\\\""
            case "\n": text += "\\n"
            case "\t": text += "\\t"
            case "\r": text += "\\r"
            case "\0": text += "\\0"
            default:
                if c.value < 0x20 || c.value == 0x7F {
                    let hex = String(c.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(c)
                }
            }
        }
        return text + "\""
    }
}
