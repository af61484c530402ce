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
        let bytes = Array(text.utf8)
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
        if namespace.rawValue == "/" || namespace == self { return true }
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

    /// Whether `name` is a valid interface name (also the rule for error names): two or more dot-separated
    /// elements of `[A-Za-z0-9_]`, none empty and none starting with a digit.
    package static func isValidInterface(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumNameLength else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first, !isDigit(first) else { return false }
            return element.allSatisfy(isElementCharacter)
        }
    }

    /// Whether `name` is a valid member (method or signal) name: `[A-Za-z0-9_]`, not empty, not starting with a digit.
    package static func isValidMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumNameLength, !isDigit(first) else { return false }
        return bytes.allSatisfy(isElementCharacter)
    }

    /// Whether `name` is a valid bus name: a unique name (`:1.42`) or a well-known name (`org.bluez`).
    package static func isValidBusName(_ name: String) -> Bool {
        var bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumNameLength else { return false }
        let isUnique = bytes[0] == UInt8(ascii: ":")
        if isUnique { bytes.removeFirst() }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first else { return false }
            if !isUnique && isDigit(first) { return false }
            return element.allSatisfy { isElementCharacter($0) || $0 == UInt8(ascii: "-") }
        }
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
