/// Reads RFC 8259 JSON text into a `JSONValue`, strictly and without Foundation: the one JSON
/// parser of ContextBus (the wire, stored `json` values and history, model files, ctxbus input).
///
/// Any value may be the document (not only objects and arrays). Strings must be well-formed
/// UTF-8 and escapes must pair surrogates correctly; a number without a fraction or exponent
/// that fits in 64 bits becomes `.int`, every other number `.double` (an integer too large for
/// `Int64` is read as the nearest `Double`; a number beyond `Double`'s range is an error).
/// Whitespace is space, tab, CR and LF only; a byte-order mark is not skipped.
///
/// NaN and infinities have no JSON form (docs/wire-format.md, "NaN and infinities"), so the parser
/// never returns one; the single exception is `readsOutOfRangeNumbersAsInfinity`, which only the
/// SQLite store sets, to read the `±1e999` that earlier versions stored for infinities.
///
/// Limits, all reported as `JSONParseError` with the byte offset, never as a crash:
/// nesting deeper than `maximumDepth` (default 512), duplicate member names (unless
/// `rejectsDuplicateKeys` is false, then the last one wins), and anything after the document
/// but whitespace.
///
/// ```swift
/// let value = try JSONParser().parse(#"{"id":7,"ok":true}"#)
/// ```
public struct JSONParser: Sendable {
    /// The nesting limit used when none is given.
    public static let defaultMaximumDepth = 512

    /// How many arrays and objects may be nested inside each other; one more is an error.
    ///
    /// Parsing recurses once per level, so keep this small enough for the calling thread's stack
    /// (each level takes well under 1 KiB).
    public var maximumDepth: Int
    /// Whether an object that repeats a member name is an error (`true`) or keeps the last value.
    public var rejectsDuplicateKeys: Bool
    /// Whether a number beyond `Double`'s range (such as `1e999`) reads as ±infinity instead of
    /// being `numberOutOfRange`.
    ///
    /// Only for text stored by versions before the one JSON codec, which wrote an infinity as
    /// `±1e999` in `json` columns, history rows and the stored model: nothing written now holds one.
    package var readsOutOfRangeNumbersAsInfinity = false

    public init(maximumDepth: Int = JSONParser.defaultMaximumDepth, rejectsDuplicateKeys: Bool = true) {
        self.maximumDepth = maximumDepth
        self.rejectsDuplicateKeys = rejectsDuplicateKeys
    }

    /// Parses one JSON document that fills `bytes` (surrounding whitespace allowed).
    ///
    /// - Throws: `JSONParseError` with the reason and the byte offset.
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        var scanner = JSONScanner(
            bytes: bytes.assumingMemoryBound(to: UInt8.self), maximumDepth: maximumDepth,
            rejectsDuplicateKeys: rejectsDuplicateKeys,
            readsOutOfRangeNumbersAsInfinity: readsOutOfRangeNumbersAsInfinity)
        return try scanner.parseDocument()
    }

    /// Parses one JSON document held in a byte collection (`[UInt8]`, `ArraySlice<UInt8>`, `Data`, …).
    ///
    /// - Throws: `JSONParseError` with the reason and the byte offset from the collection's start.
    public func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(JSONParseError) -> JSONValue {
        let contiguous = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) in try parse(UnsafeRawBufferPointer(buffer)) }
        }
        if let contiguous { return try contiguous.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBytes { buffer in
            Result { () throws(JSONParseError) in try parse(buffer) }
        }.get()
    }

    /// Parses one JSON document held in a string.
    ///
    /// - Throws: `JSONParseError`, with offsets counted in the string's UTF-8 bytes.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        text.makeContiguousUTF8()
        return try parse(text.utf8)
    }
}

/// The cursor behind `JSONParser`: a position in a borrowed byte buffer plus the nesting depth.
///
/// It lives only for the duration of one `parse` call, inside the buffer's `withUnsafe…` scope.
struct JSONScanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let rejectsDuplicateKeys: Bool
    let readsOutOfRangeNumbersAsInfinity: Bool
    var index = 0
    var depth = 0
    /// Reused storage for strings that contain escapes.
    var scratch: [UInt8] = []
    /// Members of the objects being parsed, innermost last: an object's members are collected
    /// here first so that its dictionary is allocated once at its final size.
    var pendingMembers: [(key: String, value: JSONValue, offset: Int)] = []

    init(
        bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, rejectsDuplicateKeys: Bool,
        readsOutOfRangeNumbersAsInfinity: Bool
    ) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.rejectsDuplicateKeys = rejectsDuplicateKeys
        self.readsOutOfRangeNumbersAsInfinity = readsOutOfRangeNumbersAsInfinity
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw JSONParseError(.trailingData, at: index) }
        return value
    }

    // MARK: - Values

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: index) }
        switch bytes[index] {
        case JSONByte.quote: return .string(try parseString())
        case JSONByte.openBrace: return try parseObject()
        case JSONByte.openBracket: return try parseArray()
        case JSONByte.t:
            try expectLiteral(JSONByte.trueLiteral)
            return .bool(true)
        case JSONByte.f:
            try expectLiteral(JSONByte.falseLiteral)
            return .bool(false)
        case JSONByte.n:
            try expectLiteral(JSONByte.nullLiteral)
            return .null
        case JSONByte.minus, JSONByte.zero...JSONByte.nine: return try parseNumber()
        case let byte: throw JSONParseError(.unexpectedByte(byte), at: index)
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == JSONByte.closeBracket {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: index) }
            switch bytes[index] {
            case JSONByte.comma:
                index += 1
            case JSONByte.closeBracket:
                index += 1
                depth -= 1
                return .array(elements)
            case let byte:
                throw JSONParseError(.unexpectedByte(byte), at: index)
            }
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == JSONByte.closeBrace {
            index += 1
            depth -= 1
            return .object([:])
        }
        let firstMember = pendingMembers.count
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: index) }
            guard bytes[index] == JSONByte.quote else { throw JSONParseError(.unexpectedByte(bytes[index]), at: index) }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: index) }
            guard bytes[index] == JSONByte.colon else { throw JSONParseError(.unexpectedByte(bytes[index]), at: index) }
            index += 1
            pendingMembers.append((key, try parseValue(), keyOffset))
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEndOfInput, at: index) }
            switch bytes[index] {
            case JSONByte.comma:
                index += 1
            case JSONByte.closeBrace:
                index += 1
                depth -= 1
                return .object(try collectMembers(from: firstMember))
            case let byte:
                throw JSONParseError(.unexpectedByte(byte), at: index)
            }
        }
    }

    /// Builds the dictionary of the object whose members start at `first` in `pendingMembers`.
    private mutating func collectMembers(from first: Int) throws(JSONParseError) -> [String: JSONValue] {
        var members = [String: JSONValue](minimumCapacity: pendingMembers.count - first)
        for i in first..<pendingMembers.count {
            let member = pendingMembers[i]
            if members.updateValue(member.value, forKey: member.key) != nil, rejectsDuplicateKeys {
                throw JSONParseError(.duplicateKey(member.key), at: member.offset)
            }
        }
        pendingMembers.removeSubrange(first...)
        return members
    }

    private mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maximumDepth { throw JSONParseError(.tooDeep(limit: maximumDepth), at: index) }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let expected = literal.utf8Start
        for offset in 0..<count {
            guard index + offset < bytes.count else {
                throw JSONParseError(.unexpectedEndOfInput, at: bytes.count)
            }
            let byte = bytes[index + offset]
            guard byte == expected[offset] else { throw JSONParseError(.unexpectedByte(byte), at: index + offset) }
        }
        index += count
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case JSONByte.space, JSONByte.newline, JSONByte.carriageReturn, JSONByte.tab: index += 1
            default: return
            }
        }
    }
}

/// The bytes the JSON grammar names.
package enum JSONByte {
    package static let tab: UInt8 = 0x09
    package static let newline: UInt8 = 0x0A
    package static let carriageReturn: UInt8 = 0x0D
    package static let space: UInt8 = 0x20
    package static let quote: UInt8 = 0x22
    package static let plus: UInt8 = 0x2B
    package static let comma: UInt8 = 0x2C
    package static let minus: UInt8 = 0x2D
    package static let period: UInt8 = 0x2E
    package static let slash: UInt8 = 0x2F
    package static let zero: UInt8 = 0x30
    package static let one: UInt8 = 0x31
    package static let nine: UInt8 = 0x39
    package static let colon: UInt8 = 0x3A
    package static let upperE: UInt8 = 0x45
    package static let openBracket: UInt8 = 0x5B
    package static let backslash: UInt8 = 0x5C
    package static let closeBracket: UInt8 = 0x5D
    package static let lowerE: UInt8 = 0x65
    package static let f: UInt8 = 0x66
    package static let n: UInt8 = 0x6E
    package static let t: UInt8 = 0x74
    package static let u: UInt8 = 0x75
    package static let openBrace: UInt8 = 0x7B
    package static let closeBrace: UInt8 = 0x7D
    package static let trueLiteral: StaticString = "true"
    package static let falseLiteral: StaticString = "false"
    package static let nullLiteral: StaticString = "null"
}
