/// Typed reads of a `DBusValue`.
///
/// Each accessor returns `nil` when the value has another type. Accessors look through variants (`<true>` reads as
/// `boolValue == true`), because BlueZ wraps every property in one.
extension DBusValue {
    /// The value with every enclosing variant removed.
    var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    var byteValue: UInt8? {
        if case .byte(let value) = unwrapped { return value }
        return nil
    }

    package var boolValue: Bool? {
        if case .boolean(let value) = unwrapped { return value }
        return nil
    }

    package var int16Value: Int16? {
        if case .int16(let value) = unwrapped { return value }
        return nil
    }

    package var uint16Value: UInt16? {
        if case .uint16(let value) = unwrapped { return value }
        return nil
    }

    package var int32Value: Int32? {
        if case .int32(let value) = unwrapped { return value }
        return nil
    }

    var uint32Value: UInt32? {
        if case .uint32(let value) = unwrapped { return value }
        return nil
    }

    var int64Value: Int64? {
        if case .int64(let value) = unwrapped { return value }
        return nil
    }

    var uint64Value: UInt64? {
        if case .uint64(let value) = unwrapped { return value }
        return nil
    }

    var doubleValue: Double? {
        if case .double(let value) = unwrapped { return value }
        return nil
    }

    /// The text of a string (`s`) value.
    package var stringValue: String? {
        if case .string(let value) = unwrapped { return value }
        return nil
    }

    package var objectPathValue: DBusObjectPath? {
        if case .objectPath(let value) = unwrapped { return value }
        return nil
    }

    var signatureValue: DBusSignature? {
        if case .signature(let value) = unwrapped { return value }
        return nil
    }

    /// The elements of an array (`a…`, not a dictionary).
    package var arrayValue: [DBusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The bytes of a byte array (`ay`).
    package var bytesValue: [UInt8]? {
        guard case .array(.byte, let elements) = unwrapped else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(elements.count)
        for element in elements {
            guard case .byte(let byte) = element else { return nil }
            bytes.append(byte)
        }
        return bytes
    }

    /// The strings of a string array (`as`).
    package var stringArrayValue: [String]? {
        guard case .array(.string, let elements) = unwrapped else { return nil }
        return elements.compactMap(\.stringValue)
    }

    /// The object paths of an object path array (`ao`).
    var objectPathArrayValue: [DBusObjectPath]? {
        guard case .array(.objectPath, let elements) = unwrapped else { return nil }
        return elements.compactMap(\.objectPathValue)
    }

    /// The entries of a dictionary, in wire order.
    package var dictionaryEntries: [DBusDictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// A string-keyed dictionary (`a{s…}`, typically `a{sv}`) with one variant layer removed from each value.
    ///
    /// A key that appears twice keeps its last value, as D-Bus bindings do.
    package var propertyMapValue: [String: DBusValue]? {
        guard case .dictionary(.string, _, let entries) = unwrapped else { return nil }
        var map: [String: DBusValue] = [:]
        map.reserveCapacity(entries.count)
        for entry in entries {
            guard case .string(let key) = entry.key else { return nil }
            if case .variant(let inner) = entry.value {
                map[key] = inner
            } else {
                map[key] = entry.value
            }
        }
        return map
    }

    /// The fields of a struct.
    package var structureValue: [DBusValue]? {
        if case .structure(let fields) = unwrapped { return fields }
        return nil
    }
}
