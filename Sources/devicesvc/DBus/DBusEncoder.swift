/// Writes D-Bus values in the little-endian wire format.
///
/// Alignment is counted from the first byte the encoder wrote, so an encoder that starts a message (or a body,
/// which the header pads to 8) aligns correctly. Values are written as the type they are asked for: a value of
/// another type, including an array element that does not match its array's element type, throws
/// `DBusWireError.typeMismatch`.
///
/// Arrays are written as "a UINT32 giving the length of the array data in bytes, followed by alignment padding to
/// the alignment boundary of the array element type, followed by each array element" — the padding is written even
/// when the array is empty, and the length does not count it.
package struct DBusEncoder {
    /// The bytes written so far.
    private(set) var bytes: [UInt8] = []
    private var totalDepth = 0

    package init() {}

    // MARK: - Fixed-size pieces

    /// Writes zero bytes up to the next multiple of `alignment`.
    package mutating func pad(to alignment: Int) {
        let remainder = bytes.count % alignment
        if remainder != 0 { bytes.append(contentsOf: repeatElement(0, count: alignment - remainder)) }
    }

    package mutating func writeByte(_ value: UInt8) {
        bytes.append(value)
    }

    package mutating func writeUInt16(_ value: UInt16) {
        pad(to: 2)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func writeUInt32(_ value: UInt32) {
        pad(to: 4)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func writeUInt64(_ value: UInt64) {
        pad(to: 8)
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Overwrites a UInt32 written earlier at `offset` (used for lengths known only after their contents).
    package mutating func patchUInt32(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for index in 0..<4 { bytes[offset + index] = raw[index] }
        }
    }

    /// Writes a string (`s`): length, UTF-8 bytes, NUL.
    ///
    /// - Throws: `DBusWireError.invalidString` when the text contains NUL.
    package mutating func writeString(_ text: String) throws(DBusWireError) {
        var text = text
        let start = bytes.count
        let hasNUL = text.withUTF8 { utf8 in
            if containsNUL(utf8) { return true }
            writeUInt32(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
            return false
        }
        guard !hasNUL else { throw .invalidString(offset: start, reason: "contains NUL") }
        bytes.append(0)
    }

    /// Writes a signature (`g`): one length byte, the ASCII text, NUL.
    package mutating func writeSignature(_ text: String) {
        let utf8 = text.utf8
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    // MARK: - Values

    /// Writes `value` as a value of `type`.
    ///
    /// - Throws: `DBusWireError` when the value does not have the type, a string holds NUL, an array exceeds
    ///   64 MiB or containers nest deeper than 64.
    package mutating func write(_ value: DBusValue, as type: DBusType) throws(DBusWireError) {
        switch (type, value) {
        case (.byte, .byte(let raw)): writeByte(raw)
        case (.boolean, .boolean(let raw)): writeUInt32(raw ? 1 : 0)
        case (.int16, .int16(let raw)): writeUInt16(UInt16(bitPattern: raw))
        case (.uint16, .uint16(let raw)): writeUInt16(raw)
        case (.int32, .int32(let raw)): writeUInt32(UInt32(bitPattern: raw))
        case (.uint32, .uint32(let raw)): writeUInt32(raw)
        case (.unixFD, .unixFD(let raw)): writeUInt32(raw)
        case (.int64, .int64(let raw)): writeUInt64(UInt64(bitPattern: raw))
        case (.uint64, .uint64(let raw)): writeUInt64(raw)
        case (.double, .double(let raw)): writeUInt64(raw.bitPattern)
        case (.string, .string(let raw)): try writeString(raw)
        case (.objectPath, .objectPath(let path)): try writeString(path.rawValue)
        case (.signature, .signature(let signature)): writeSignature(signature.rawValue)
        case (.variant, .variant(let inner)): try writeVariant(inner)
        case (.array(let element), .array(let valueElement, let elements)) where element == valueElement:
            try writeArray(elementAlignment: element.alignment) { encoder throws(DBusWireError) in
                for item in elements { try encoder.write(item, as: element) }
            }
        case (.dictionary(let key, let valueType), .dictionary(let entryKey, let entryValue, let entries))
        where key == entryKey && valueType == entryValue:
            try writeArray(elementAlignment: 8) { encoder throws(DBusWireError) in
                for entry in entries {
                    encoder.pad(to: 8)
                    try encoder.write(entry.key, as: key)
                    try encoder.write(entry.value, as: valueType)
                }
            }
        case (.structure(let fieldTypes), .structure(let fields)) where fieldTypes.count == fields.count:
            try nest { encoder throws(DBusWireError) in
                encoder.pad(to: 8)
                for (field, fieldType) in zip(fields, fieldTypes) { try encoder.write(field, as: fieldType) }
            }
        default:
            throw .typeMismatch(expected: type.signature, actual: value.type.signature)
        }
    }

    /// Writes each value as its own type, as a message body does.
    package mutating func write(_ values: [DBusValue]) throws(DBusWireError) {
        for value in values { try write(value, as: value.type) }
    }

    private mutating func writeVariant(_ inner: DBusValue) throws(DBusWireError) {
        let innerType = inner.type
        // Validates the length and nesting limits of the inner signature.
        let signature = try DBusSignature.singleType(innerType.signature)
        writeSignature(signature.signature)
        try nest { encoder throws(DBusWireError) in try encoder.write(inner, as: innerType) }
    }

    private mutating func writeArray(
        elementAlignment: Int, elements: (inout DBusEncoder) throws(DBusWireError) -> Void
    ) throws(DBusWireError) {
        writeUInt32(0)
        let lengthOffset = bytes.count - 4
        pad(to: elementAlignment)
        let start = bytes.count
        try nest(elements)
        let length = bytes.count - start
        guard length <= DBusLimits.maximumArrayLength else {
            throw .arrayTooLong(length: length, limit: DBusLimits.maximumArrayLength)
        }
        patchUInt32(UInt32(length), at: lengthOffset)
    }

    private mutating func nest(_ body: (inout DBusEncoder) throws(DBusWireError) -> Void) throws(DBusWireError) {
        totalDepth += 1
        defer { totalDepth -= 1 }
        guard totalDepth <= DBusLimits.maximumTotalDepth else {
            throw .nestingTooDeep(limit: DBusLimits.maximumTotalDepth)
        }
        try body(&self)
    }
}
