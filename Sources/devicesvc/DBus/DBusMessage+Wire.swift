/// The wire form of a message.
///
/// ```
/// offset 0   | byte order 'l'/'B' | type | flags | version 1 |
///        4   | body length: UInt32                           |
///        8   | serial: UInt32 (non-zero)                     |
///        12  | header fields: ARRAY of STRUCT(BYTE code, VARIANT value)
///            | zero padding to a multiple of 8               |
///            | body: the values of the SIGNATURE field       |
/// ```
extension DBusMessage {
    /// The bytes of the fixed part of the header, which are enough to know a message's total length.
    static let fixedHeaderLength = 16

    /// Encodes the message little-endian, with header fields in the order libdbus writes them.
    ///
    /// - Throws: `DBusWireError` when the serial is zero, a required header field is missing or invalid, a value
    ///   cannot be encoded, or the message exceeds 128 MiB.
    package func encoded() throws(DBusWireError) -> [UInt8] {
        try validateHeader()
        let signature = try DBusSignature(bodySignature)
        var encoder = DBusEncoder()
        encoder.writeByte(UInt8(ascii: "l"))
        encoder.writeByte(kind.rawValue)
        encoder.writeByte(flags.rawValue)
        encoder.writeByte(1)
        encoder.writeUInt32(0)  // body length, patched below
        encoder.writeUInt32(serial)
        var fields: [DBusDictionaryEntry] = []
        func add(_ field: HeaderField, _ value: DBusValue?) {
            if let value { fields.append(DBusDictionaryEntry(.byte(field.rawValue), .variant(value))) }
        }
        add(.path, path.map(DBusValue.objectPath))
        add(.destination, destination.map(DBusValue.string))
        add(.interface, interface.map(DBusValue.string))
        add(.member, member.map(DBusValue.string))
        add(.errorName, errorName.map(DBusValue.string))
        add(.replySerial, replySerial.map(DBusValue.uint32))
        add(.sender, sender.map(DBusValue.string))
        if !signature.types.isEmpty { add(.signature, .signature(signature)) }
        add(.unixFDs, unixFDCount.map(DBusValue.uint32))
        let fieldStructs = fields.map { DBusValue.structure([$0.key, $0.value]) }
        try encoder.write(.array(DBusMessage.headerFieldType, fieldStructs), as: .array(DBusMessage.headerFieldType))
        encoder.pad(to: 8)
        let bodyStart = encoder.bytes.count
        for (value, type) in zip(body, signature.types) { try encoder.write(value, as: type) }
        let bodyLength = encoder.bytes.count - bodyStart
        guard encoder.bytes.count <= DBusLimits.maximumMessageLength else {
            throw .messageTooLarge(length: encoder.bytes.count, limit: DBusLimits.maximumMessageLength)
        }
        encoder.patchUInt32(UInt32(bodyLength), at: 4)
        return encoder.bytes
    }

    /// The total length of the message that starts with `prefix`, read from its first 16 bytes.
    ///
    /// - Returns: `nil` when fewer than 16 bytes are available.
    /// - Throws: `DBusWireError` when the byte order or version is invalid or the message would exceed 128 MiB.
    package static func totalLength(ofMessageStartingWith prefix: some Collection<UInt8>) throws(DBusWireError) -> Int?
    {
        guard prefix.count >= fixedHeaderLength else { return nil }
        let fixed = Array(prefix.prefix(fixedHeaderLength))
        let isBigEndian = try byteOrder(fixed[0])
        guard fixed[3] == 1 else { throw .unsupportedProtocolVersion(fixed[3]) }
        var decoder = DBusDecoder(bytes: fixed, isBigEndian: isBigEndian, offset: 4)
        let bodyLength = Int(try decoder.readUInt32())
        _ = try decoder.readUInt32()
        let fieldsLength = Int(try decoder.readUInt32())
        guard fieldsLength <= DBusLimits.maximumArrayLength else {
            throw .arrayTooLong(length: fieldsLength, limit: DBusLimits.maximumArrayLength)
        }
        let headerLength = (fixedHeaderLength + fieldsLength + 7) / 8 * 8
        let total = headerLength + bodyLength
        guard total <= DBusLimits.maximumMessageLength else {
            throw .messageTooLarge(length: total, limit: DBusLimits.maximumMessageLength)
        }
        return total
    }

    /// Decodes exactly one whole message, in either byte order.
    ///
    /// - Throws: `DBusWireError` for any malformed or hostile input, `.unknownMessageType` for a type this
    ///   implementation must ignore.
    package static func decode(_ bytes: [UInt8]) throws(DBusWireError) -> DBusMessage {
        guard let total = try totalLength(ofMessageStartingWith: bytes) else {
            throw .truncated(offset: bytes.count, needed: fixedHeaderLength - bytes.count)
        }
        guard bytes.count == total else {
            if bytes.count < total { throw .truncated(offset: bytes.count, needed: total - bytes.count) }
            throw .bodyLengthMismatch(declared: total, used: bytes.count)
        }
        guard let kind = Kind(rawValue: bytes[1]) else {
            if bytes[1] == 0 { throw .invalidHeader("message type 0 is invalid") }
            throw .unknownMessageType(bytes[1])
        }
        var decoder = DBusDecoder(bytes: bytes, isBigEndian: try byteOrder(bytes[0]), offset: 4)
        let bodyLength = Int(try decoder.readUInt32())
        var message = DBusMessage(kind: kind)
        message.flags = Flags(rawValue: bytes[2])
        message.serial = try decoder.readUInt32()
        let signature = try message.readHeaderFields(from: &decoder)
        try decoder.skipPadding(to: 8)
        let bodyStart = decoder.offset
        message.body = try decoder.read(signature)
        guard decoder.offset - bodyStart == bodyLength else {
            throw .bodyLengthMismatch(declared: bodyLength, used: decoder.offset - bodyStart)
        }
        try message.validateHeader()
        return message
    }

    // MARK: - Header fields

    /// `STRUCT(BYTE, VARIANT)`, the element type of the header field array.
    private static let headerFieldType = DBusType.structure([.byte, .variant])

    private static func byteOrder(_ mark: UInt8) throws(DBusWireError) -> Bool {
        switch mark {
        case UInt8(ascii: "l"): return false
        case UInt8(ascii: "B"): return true
        default: throw .invalidByteOrder(mark)
        }
    }

    /// Reads the header field array (`ARRAY of STRUCT(BYTE, VARIANT)`) into this message and returns the body
    /// signature. Field by field, without building the array's values: every message's header is read here.
    private mutating func readHeaderFields(from decoder: inout DBusDecoder) throws(DBusWireError) -> DBusSignature {
        var seen: UInt32 = 0
        var signature = DBusSignature.empty
        try decoder.readArrayOfStructures { decoder throws(DBusWireError) in
            let code = try decoder.readByte()
            let value = try decoder.readVariantContent()
            guard let field = HeaderField(rawValue: code) else { return }  // "unknown fields must be ignored"
            guard seen & (1 << UInt32(code)) == 0 else { throw .invalidHeader("header field \(code) appears twice") }
            seen |= 1 << UInt32(code)
            switch (field, value) {
            case (.path, .objectPath(let path)): self.path = path
            case (.interface, .string(let text)): interface = text
            case (.member, .string(let text)): member = text
            case (.errorName, .string(let text)): errorName = text
            case (.replySerial, .uint32(let number)): replySerial = number
            case (.destination, .string(let text)): destination = text
            case (.sender, .string(let text)): sender = text
            case (.signature, .signature(let value)): signature = value
            case (.unixFDs, .uint32(let number)): unixFDCount = number
            default: throw .invalidHeader("header field \(code) has type \(value.type.signature)")
            }
        }
        return signature
    }

    /// Checks the fields each message type requires and the syntax of every name.
    private func validateHeader() throws(DBusWireError) {
        guard serial != 0 else { throw .invalidHeader("serial is zero") }
        switch kind {
        case .methodCall:
            guard path != nil, member != nil else { throw .invalidHeader("a method call needs PATH and MEMBER") }
        case .signal:
            guard path != nil, interface != nil, member != nil else {
                throw .invalidHeader("a signal needs PATH, INTERFACE and MEMBER")
            }
        case .error:
            guard errorName != nil, replySerial != nil else {
                throw .invalidHeader("an error needs ERROR_NAME and REPLY_SERIAL")
            }
        case .methodReturn:
            guard replySerial != nil else { throw .invalidHeader("a method return needs REPLY_SERIAL") }
        }
        if replySerial == 0 { throw .invalidHeader("reply serial is zero") }
        if let interface { try DBusNames.checkInterface(interface) }
        if let member { try DBusNames.checkMember(member) }
        if let errorName { try DBusNames.checkErrorName(errorName) }
        if let destination { try DBusNames.checkBusName(destination) }
        if let sender { try DBusNames.checkBusName(sender) }
    }
}
