/// A validated D-Bus object path, such as `/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF`.
///
/// "The path must begin with an ASCII '/' character, and must consist of elements separated by slash characters.
/// Each element must only contain the ASCII characters `[A-Z][a-z][0-9]_`. No element may be the empty string.
/// A trailing '/' character is not allowed unless the path is the root path."
package struct DBusObjectPath: Sendable, Hashable, Comparable {
    /// The path text.
    package let rawValue: String

    /// The root path `/`.
    package static let root = DBusObjectPath(unchecked: "/")

    /// Validates a path.
    ///
    /// - Throws: `DBusWireError.invalidObjectPath` when the text breaks the rules above.
    package init(_ text: String) throws(DBusWireError) {
        guard DBusObjectPath.isValid(text) else { throw .invalidObjectPath(text) }
        rawValue = text
    }

    private init(unchecked text: String) {
        rawValue = text
    }

    /// Whether `text` is a valid object path.
    package static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = true
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else if DBusNames.isElementCharacter(byte) {
                previousWasSlash = false
            } else {
                return false
            }
        }
        return !previousWasSlash
    }

    /// Whether this path is `namespace` itself or lies below it, as the `path_namespace` match key defines.
    package func isInNamespace(_ namespace: DBusObjectPath) -> Bool {
        // Lengths first, then byte by byte in place from the end, where sibling paths differ (the tree's lookups ask
        // this of every object): no `namespace + "/"` to allocate, no `starts(with:)` walking the UTF-8 views.
        let count = namespace.rawValue.utf8.count
        let ownCount = rawValue.utf8.count
        if count == 1 { return true }  // "/", the only path of one byte
        if ownCount == count { return self == namespace }
        guard ownCount > count else { return false }
        let inPlace = rawValue.utf8.withContiguousStorageIfAvailable { path in
            namespace.rawValue.utf8.withContiguousStorageIfAvailable { prefix in
                guard path[count] == UInt8(ascii: "/") else { return false }
                for index in stride(from: count - 1, through: 0, by: -1) where path[index] != prefix[index] {
                    return false
                }
                return true
            }
        }
        if let inPlace = inPlace ?? nil { return inPlace }
        return rawValue.hasPrefix(namespace.rawValue + "/")
    }

    /// The path of the child element `name` (which must be a valid element) below this path.
    ///
    /// - Throws: `DBusWireError.invalidObjectPath` when `name` is empty or has other characters than `[A-Za-z0-9_]`.
    package func appending(_ name: String) throws(DBusWireError) -> DBusObjectPath {
        guard !name.isEmpty, name.utf8.allSatisfy(DBusNames.isElementCharacter) else {
            throw .invalidObjectPath(rawValue + "/" + name)
        }
        return try DBusObjectPath(rawValue == "/" ? "/" + name : rawValue + "/" + name)
    }

    package static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

extension DBusObjectPath: CustomStringConvertible {
    package var description: String { rawValue }
}

/// Validation of D-Bus bus, interface, member and error names.
package enum DBusNames {
    /// The longest name the specification allows.
    package static let maximumNameLength = 255

    package static func isElementCharacter(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // The checks run on the names of every message read (`validateHeader`): one pass over the UTF-8, no copies.

    /// Whether `name` is a valid interface name (also the rule for error names): two or more dot-separated
    /// elements of `[A-Za-z0-9_]`, none empty and none starting with a digit.
    package static func isValidInterface(_ name: String) -> Bool {
        isValidDottedName(name.utf8, allowsHyphen: false, allowsLeadingDigit: false)
    }

    /// Whether `name` is a valid member (method or signal) name: `[A-Za-z0-9_]`, not empty, not starting with a digit.
    package static func isValidMember(_ name: String) -> Bool {
        var count = 0
        for byte in name.utf8 {
            if count == 0 && isDigit(byte) { return false }
            guard isElementCharacter(byte) else { return false }
            count += 1
        }
        return count > 0 && count <= maximumNameLength
    }

    /// Whether `name` is a valid bus name: a unique name (`:1.42`) or a well-known name (`org.bluez`).
    package static func isValidBusName(_ name: String) -> Bool {
        let bytes = name.utf8
        guard bytes.first == UInt8(ascii: ":") else {
            return isValidDottedName(bytes, allowsHyphen: true, allowsLeadingDigit: false)
        }
        return bytes.count <= maximumNameLength
            && isValidDottedName(bytes.dropFirst(), allowsHyphen: true, allowsLeadingDigit: true)
    }

    /// Two or more dot-separated elements of `[A-Za-z0-9_]` (and `-` when `allowsHyphen`), none empty, none starting
    /// with a digit unless `allowsLeadingDigit`, at most `maximumNameLength` bytes in all.
    private static func isValidDottedName(
        _ name: some Collection<UInt8>, allowsHyphen: Bool, allowsLeadingDigit: Bool
    ) -> Bool {
        var count = 0
        var elements = 1
        var elementLength = 0
        for byte in name {
            count += 1
            if byte == UInt8(ascii: ".") {
                guard elementLength > 0 else { return false }
                elements += 1
                elementLength = 0
                continue
            }
            if elementLength == 0 && !allowsLeadingDigit && isDigit(byte) { return false }
            guard isElementCharacter(byte) || (allowsHyphen && byte == UInt8(ascii: "-")) else { return false }
            elementLength += 1
        }
        return count > 0 && count <= maximumNameLength && elements >= 2 && elementLength > 0
    }

    /// Throws unless `name` is a valid interface name.
    package static func checkInterface(_ name: String) throws(DBusWireError) {
        guard isValidInterface(name) else { throw .invalidName(name, kind: "interface") }
    }

    /// Throws unless `name` is a valid member name.
    package static func checkMember(_ name: String) throws(DBusWireError) {
        guard isValidMember(name) else { throw .invalidName(name, kind: "member") }
    }

    /// Throws unless `name` is a valid error name.
    package static func checkErrorName(_ name: String) throws(DBusWireError) {
        guard isValidInterface(name) else { throw .invalidName(name, kind: "error") }
    }

    /// Throws unless `name` is a valid bus name.
    package static func checkBusName(_ name: String) throws(DBusWireError) {
        guard isValidBusName(name) else { throw .invalidName(name, kind: "bus") }
    }
}
