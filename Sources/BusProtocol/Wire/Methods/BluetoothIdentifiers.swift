/// A Bluetooth device address, `"AA:BB:CC:DD:EE:FF"` (read case-insensitively, kept uppercase).
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in uppercase, as BlueZ writes it.
    public let string: String

    /// Parses six colon-separated pairs of hexadecimal digits; `nil` for anything else.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 17 else { return nil }
        for (i, byte) in utf8.enumerated() {
            if i % 3 == 2 {
                guard byte == 0x3A else { return nil }
            } else {
                guard byte.isHexDigit else { return nil }
            }
        }
        string = text.uppercased()
    }

    public var description: String { string }

    /// Reads the member `key` of `fields` as an address.
    static func read(_ fields: JSONFields, _ key: String) throws(RPCError) -> BluetoothAddress {
        guard let address = try readOptional(fields, key) else { throw fields.error(key, "is required") }
        return address
    }

    static func readOptional(_ fields: JSONFields, _ key: String) throws(RPCError) -> BluetoothAddress? {
        guard let text = try fields.optionalString(key) else { return nil }
        guard let address = BluetoothAddress(text) else {
            throw fields.error(key, "expected a Bluetooth address like \"AA:BB:CC:DD:EE:FF\"")
        }
        return address
    }
}

/// A GATT service or characteristic UUID: a 16-bit short form (`"2a19"`) or a full 128-bit
/// string (`"00002a19-0000-1000-8000-00805f9b34fb"`).
///
/// `string` keeps the text as the client wrote it (it is what `Reading.characteristic`
/// records); `canonical` is the lowercase 128-bit form, for comparing with what BlueZ reports.
public struct BluetoothUUID: Sendable, Hashable, CustomStringConvertible {
    /// The UUID as written.
    public let string: String
    /// The lowercase 128-bit form (a short form expanded with the Bluetooth base UUID).
    public let canonical: String

    /// Parses a short or full UUID; `nil` for anything else.
    public init?(_ text: String) {
        let utf8 = Array(text.utf8)
        switch utf8.count {
        case 4:
            guard utf8.allSatisfy(\.isHexDigit) else { return nil }
            canonical = "0000\(text.lowercased())-0000-1000-8000-00805f9b34fb"
        case 36:
            for (i, byte) in utf8.enumerated() {
                if [8, 13, 18, 23].contains(i) {
                    guard byte == 0x2D else { return nil }
                } else {
                    guard byte.isHexDigit else { return nil }
                }
            }
            canonical = text.lowercased()
        default:
            return nil
        }
        string = text
    }

    public var description: String { string }

    /// Whether both name the same UUID, whatever their forms.
    public func matches(_ other: BluetoothUUID) -> Bool {
        canonical == other.canonical
    }

    static func read(_ fields: JSONFields, _ key: String) throws(RPCError) -> BluetoothUUID {
        guard let uuid = try readOptional(fields, key) else { throw fields.error(key, "is required") }
        return uuid
    }

    static func readOptional(_ fields: JSONFields, _ key: String) throws(RPCError) -> BluetoothUUID? {
        guard let text = try fields.optionalString(key) else { return nil }
        return try parse(text, path: fields.path(of: key))
    }

    static func readList(_ fields: JSONFields, _ key: String) throws(RPCError) -> [BluetoothUUID] {
        try fields.elements(key) { (item, i) throws(RPCError) in
            guard case .string(let text) = item else {
                throw .invalidParams(field: fields.path(of: key, index: i), message: "expected a string")
            }
            if let uuid = BluetoothUUID(text) { return uuid }
            return try parse(text, path: fields.path(of: key, index: i))
        }
    }

    private static func parse(_ text: String, path: String) throws(RPCError) -> BluetoothUUID {
        guard let uuid = BluetoothUUID(text) else {
            throw .invalidParams(
                field: path,
                message: "expected a 16-bit UUID like \"2a19\" or a 128-bit one like \"0000…-…-00805f9b34fb\"")
        }
        return uuid
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
