/// Reads D-Bus values from wire bytes in either byte order.
///
/// Offsets, and so alignment, count from the start of `bytes`, which must be the start of the message. Every
/// read is bounds-checked against `end`; padding must be zero, booleans 0 or 1, strings UTF-8 without NUL, object
/// paths and signatures valid, arrays at most 64 MiB and ending exactly at their length, and containers nested at
/// most 64 deep. Anything else throws `DBusWireError`.
package struct DBusDecoder {
    package let bytes: [UInt8]
    package let isBigEndian: Bool
    /// The next byte to read.
    private(set) var offset: Int
    /// One past the last byte this decoder may read.
    package var end: Int
    private var totalDepth = 0

    package init(bytes: [UInt8], isBigEndian: Bool, offset: Int = 0, end: Int? = nil) {
        self.bytes = bytes
        self.isBigEndian = isBigEndian
        self.offset = offset
        self.end = min(end ?? bytes.count, bytes.count)
    }

    // MARK: - Fixed-size pieces

    private func need(_ count: Int) throws(DBusWireError) {
        guard count <= end - offset else { throw .truncated(offset: offset, needed: count) }
    }

    /// Skips padding up to the next multiple of `alignment`, checking that it is zero.
    package mutating func skipPadding(to alignment: Int) throws(DBusWireError) {
        let remainder = offset % alignment
        guard remainder != 0 else { return }
        let count = alignment - remainder
        try need(count)
        for index in offset..<(offset + count) where bytes[index] != 0 {
            throw .nonZeroPadding(offset: index)
        }
        offset += count
    }

    package mutating func readByte() throws(DBusWireError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws(DBusWireError) -> T {
        let size = MemoryLayout<T>.size
        try skipPadding(to: size)
        try need(size)
        var raw: T = 0
        for index in 0..<size {
            let byte = T(bytes[offset + (isBigEndian ? index : size - 1 - index)])
            raw = (raw << 8) | byte
        }
        offset += size
        return raw
    }

    package mutating func readUInt16() throws(DBusWireError) -> UInt16 { try readInteger(UInt16.self) }
    package mutating func readUInt32() throws(DBusWireError) -> UInt32 { try readInteger(UInt32.self) }
    package mutating func readUInt64() throws(DBusWireError) -> UInt64 { try readInteger(UInt64.self) }

    /// Reads `count` bytes that must be followed by NUL, then the NUL, and returns them as UTF-8 text.
    ///
    /// Validated as the C string it is (the NUL is checked first): `String(validatingCString:)` is the standard
    /// library's direct UTF-8 check, where `String(validating:as:)` on a slice took its generic path (a tenth of
    /// devicesvc's instructions per chain went to it, most for the header fields of every message).
    private mutating func readTerminatedText(count: Int, start: Int) throws(DBusWireError) -> String {
        guard count < end - offset else { throw .truncated(offset: offset, needed: count + 1) }
        guard bytes[offset + count] == 0 else { throw .invalidString(offset: start, reason: "missing terminating NUL") }
        let first = offset
        let read = bytes.withUnsafeBufferPointer { buffer -> (hasNUL: Bool, text: String?) in
            guard let base = buffer.baseAddress else { return (false, nil) }
            guard !UnsafeBufferPointer(rebasing: buffer[first..<(first + count)]).contains(0) else {
                return (true, nil)
            }
            let text = UnsafeRawPointer(base + first).withMemoryRebound(to: CChar.self, capacity: count + 1) {
                String(validatingCString: $0)
            }
            return (false, text)
        }
        guard !read.hasNUL else { throw .invalidString(offset: start, reason: "contains NUL") }
        guard let text = read.text else { throw .invalidString(offset: start, reason: "not UTF-8") }
        offset += count + 1
        return text
    }

    package mutating func readString() throws(DBusWireError) -> String {
        let length = try readUInt32()
        let start = offset
        guard Int(length) <= DBusLimits.maximumMessageLength else {
            throw .truncated(offset: start, needed: Int(length))
        }
        return try readTerminatedText(count: Int(length), start: start)
    }

    package mutating func readSignatureText() throws(DBusWireError) -> String {
        let length = try readByte()
        return try readTerminatedText(count: Int(length), start: offset)
    }

    // MARK: - Values

    /// Reads one value of `type`.
    package mutating func read(_ type: DBusType) throws(DBusWireError) -> DBusValue {
        switch type {
        case .byte: return .byte(try readByte())
        case .boolean:
            let start = offset
            let raw = try readUInt32()
            guard raw <= 1 else { throw .invalidBoolean(raw, offset: start) }
            return .boolean(raw == 1)
        case .int16: return .int16(Int16(bitPattern: try readUInt16()))
        case .uint16: return .uint16(try readUInt16())
        case .int32: return .int32(Int32(bitPattern: try readUInt32()))
        case .uint32: return .uint32(try readUInt32())
        case .unixFD: return .unixFD(try readUInt32())
        case .int64: return .int64(Int64(bitPattern: try readUInt64()))
        case .uint64: return .uint64(try readUInt64())
        case .double: return .double(Double(bitPattern: try readUInt64()))
        case .string: return .string(try readString())
        case .objectPath: return .objectPath(try DBusObjectPath(try readString()))
        case .signature: return .signature(try DBusSignature(try readSignatureText()))
        case .variant: return .variant(try readVariantContent())
        case .array(.byte):
            // A byte array (a characteristic's value) in one pass, not one element read at a time.
            let length = Int(try readUInt32())
            guard length <= DBusLimits.maximumArrayLength else {
                throw .arrayTooLong(length: length, limit: DBusLimits.maximumArrayLength)
            }
            try need(length)
            return try nest { decoder throws(DBusWireError) in
                defer { decoder.offset += length }
                return .array(.byte, decoder.bytes[decoder.offset..<(decoder.offset + length)].map(DBusValue.byte))
            }
        case .array(let element):
            return .array(
                element,
                try readArray(elementAlignment: element.alignment) { decoder throws(DBusWireError) in
                    try decoder.read(element)
                })
        case .dictionary(let key, let value):
            let entries = try readArray(elementAlignment: 8) { decoder throws(DBusWireError) in
                try decoder.skipPadding(to: 8)
                return DBusDictionaryEntry(try decoder.read(key), try decoder.read(value))
            }
            return .dictionary(key: key, value: value, entries)
        case .structure(let fieldTypes):
            return .structure(
                try nest { decoder throws(DBusWireError) in
                    try decoder.skipPadding(to: 8)
                    var fields: [DBusValue] = []
                    fields.reserveCapacity(fieldTypes.count)
                    for fieldType in fieldTypes { fields.append(try decoder.read(fieldType)) }
                    return fields
                })
        }
    }

    /// Reads a variant's signature and the value it announces (without the `.variant` around it).
    package mutating func readVariantContent() throws(DBusWireError) -> DBusValue {
        let text = try readSignatureText()
        let innerType: DBusType
        if let common = Self.commonVariantTypes[text] {
            innerType = common
        } else {
            innerType = try DBusSignature.singleType(text)
        }
        return try nest { decoder throws(DBusWireError) in try decoder.read(innerType) }
    }

    /// The types most variants hold (every header field, nearly every BlueZ property), so that their signatures
    /// need no parsing.
    private static let commonVariantTypes: [String: DBusType] = [
        "y": .byte, "b": .boolean, "n": .int16, "q": .uint16, "i": .int32, "u": .uint32, "x": .int64,
        "t": .uint64, "d": .double, "s": .string, "o": .objectPath, "g": .signature, "ay": .array(.byte),
        "as": .array(.string), "ao": .array(.objectPath),
    ]

    /// Reads an array of structures (as the header fields are), calling `fields` at the start of each, after its
    /// alignment, to read the structure's fields: no array of values is built.
    package mutating func readArrayOfStructures(
        _ fields: (inout DBusDecoder) throws(DBusWireError) -> Void
    ) throws(DBusWireError) {
        _ = try readArray(elementAlignment: 8) { decoder throws(DBusWireError) in
            try decoder.nest { decoder throws(DBusWireError) in
                try decoder.skipPadding(to: 8)
                try fields(&decoder)
            }
        }
    }

    /// Reads one value of each type in `signature`, as a message body does.
    package mutating func read(_ signature: DBusSignature) throws(DBusWireError) -> [DBusValue] {
        var values: [DBusValue] = []
        values.reserveCapacity(signature.types.count)
        for type in signature.types { values.append(try read(type)) }
        return values
    }

    private mutating func readArray<Element>(
        elementAlignment: Int, element: (inout DBusDecoder) throws(DBusWireError) -> Element
    ) throws(DBusWireError) -> [Element] {
        let length = Int(try readUInt32())
        guard length <= DBusLimits.maximumArrayLength else {
            throw .arrayTooLong(length: length, limit: DBusLimits.maximumArrayLength)
        }
        try skipPadding(to: elementAlignment)
        try need(length)
        let arrayEnd = offset + length
        return try nest { decoder throws(DBusWireError) in
            let outerEnd = decoder.end
            decoder.end = arrayEnd
            defer { decoder.end = outerEnd }
            var elements: [Element] = []
            while decoder.offset < arrayEnd {
                elements.append(try element(&decoder))
            }
            guard decoder.offset == arrayEnd else { throw .arrayLengthMismatch(offset: decoder.offset) }
            return elements
        }
    }

    private mutating func nest<Result>(
        _ body: (inout DBusDecoder) throws(DBusWireError) -> Result
    ) throws(DBusWireError) -> Result {
        totalDepth += 1
        defer { totalDepth -= 1 }
        guard totalDepth <= DBusLimits.maximumTotalDepth else {
            throw .nestingTooDeep(limit: DBusLimits.maximumTotalDepth)
        }
        return try body(&self)
    }
}
