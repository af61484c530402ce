/// A validated D-Bus signature: a sequence of zero or more single complete types, such as `sa{sv}as`.
///
/// Parsing checks the whole grammar of the specification: known type codes, dict entries only directly inside an
/// array with a basic key and exactly one value type, no empty structs, at most 255 bytes, and array and struct
/// nesting of at most 32 each.
///
/// ```swift
/// let signature = try DBusSignature("a{oa{sa{sv}}}")
/// signature.types  // [.dictionary(key: .objectPath, value: .dictionary(...))]
/// ```
package struct DBusSignature: Sendable, Hashable {
    /// The single complete types, in order.
    package let types: [DBusType]

    /// The signature text.
    package var rawValue: String {
        var text = ""
        for type in types { type.appendSignature(to: &text) }
        return text
    }

    /// The empty signature, of a message without a body.
    package static let empty = DBusSignature(types: [])

    /// Makes the signature of a sequence of types.
    ///
    /// - Throws: `DBusWireError.invalidSignature` when the text would break the length or nesting limits.
    package init(validating types: [DBusType]) throws(DBusWireError) {
        var text = ""
        for type in types { type.appendSignature(to: &text) }
        self = try DBusSignature(text)
    }

    private init(types: [DBusType]) {
        self.types = types
    }

    /// Parses and validates signature text.
    ///
    /// - Throws: `DBusWireError.invalidSignature` naming what is wrong.
    package init(_ text: String) throws(DBusWireError) {
        var parser = SignatureParser(text: text)
        types = try parser.parseAll()
    }

    /// Parses text that must hold exactly one single complete type, as a variant's signature must.
    ///
    /// - Throws: `DBusWireError.invalidSignature` when the text is invalid or holds zero or several types.
    package static func singleType(_ text: String) throws(DBusWireError) -> DBusType {
        let signature = try DBusSignature(text)
        guard signature.types.count == 1 else {
            throw .invalidSignature(text, reason: "expected exactly one complete type")
        }
        return signature.types[0]
    }
}

extension DBusSignature: CustomStringConvertible {
    package var description: String { rawValue }
}

/// A recursive-descent parser over the bytes of a signature.
private struct SignatureParser {
    let text: String
    let bytes: [UInt8]
    var index = 0
    var arrayDepth = 0
    var structDepth = 0

    init(text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    mutating func parseAll() throws(DBusWireError) -> [DBusType] {
        guard bytes.count <= DBusLimits.maximumSignatureLength else {
            throw fail("longer than \(DBusLimits.maximumSignatureLength) bytes")
        }
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne())
        }
        return types
    }

    func fail(_ reason: String) -> DBusWireError {
        .invalidSignature(text, reason: reason)
    }

    mutating func parseOne() throws(DBusWireError) -> DBusType {
        guard index < bytes.count else { throw fail("ends in the middle of a type") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"): return try parseArray()
        case UInt8(ascii: "("): return try parseStruct()
        case UInt8(ascii: "{"): throw fail("dict entry outside an array")
        case UInt8(ascii: ")"): throw fail("unbalanced ')'")
        case UInt8(ascii: "}"): throw fail("unbalanced '}'")
        default: throw fail("unknown type code '\(Unicode.Scalar(code))'")
        }
    }

    mutating func parseArray() throws(DBusWireError) -> DBusType {
        arrayDepth += 1
        defer { arrayDepth -= 1 }
        guard arrayDepth <= DBusLimits.maximumContainerDepth else {
            throw fail("arrays nest deeper than \(DBusLimits.maximumContainerDepth)")
        }
        guard index < bytes.count else { throw fail("array without an element type") }
        guard bytes[index] == UInt8(ascii: "{") else { return .array(try parseOne()) }
        index += 1
        structDepth += 1
        defer { structDepth -= 1 }
        guard structDepth <= DBusLimits.maximumContainerDepth else {
            throw fail("structs nest deeper than \(DBusLimits.maximumContainerDepth)")
        }
        let key = try parseOne()
        guard key.isBasic else { throw fail("dict entry key must be a basic type") }
        guard index < bytes.count, bytes[index] != UInt8(ascii: "}") else {
            throw fail("dict entry must hold exactly a key and a value")
        }
        let value = try parseOne()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
            throw fail("dict entry must hold exactly a key and a value")
        }
        index += 1
        return .dictionary(key: key, value: value)
    }

    mutating func parseStruct() throws(DBusWireError) -> DBusType {
        structDepth += 1
        defer { structDepth -= 1 }
        guard structDepth <= DBusLimits.maximumContainerDepth else {
            throw fail("structs nest deeper than \(DBusLimits.maximumContainerDepth)")
        }
        var fields: [DBusType] = []
        while true {
            guard index < bytes.count else { throw fail("unterminated struct") }
            if bytes[index] == UInt8(ascii: ")") {
                index += 1
                break
            }
            fields.append(try parseOne())
        }
        guard !fields.isEmpty else { throw fail("empty struct") }
        return .structure(fields)
    }
}
