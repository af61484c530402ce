/// One transport a D-Bus server listens on, parsed from an address string.
///
/// An address string is a `;`-separated list of `transport:key=value,key=value` entries, tried in order. Values
/// are percent-escaped. This client speaks the `unix` transport with `path=` or `abstract=`; other entries
/// (`tcp:`, `unixexec:`, or `unix:dir=`, which is for servers) are skipped when the list is tried.
///
/// ```swift
/// let addresses = try DBusAddress.parseList("unix:abstract=/tmp/dbus-x;unix:path=/run/dbus/system_bus_socket")
/// ```
package enum DBusAddress: Sendable, Hashable, CustomStringConvertible {
    /// A Unix socket at a file system path.
    case unixPath(String)
    /// A Unix socket in the Linux abstract namespace (the name without its leading NUL).
    case unixAbstract(String)

    /// The system bus address used when `DBUS_SYSTEM_BUS_ADDRESS` is not set.
    package static let defaultSystemBus = "unix:path=/run/dbus/system_bus_socket"

    /// The system bus address: `DBUS_SYSTEM_BUS_ADDRESS` or the default socket.
    package static func systemBus(environment: [String: String]) -> String {
        environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultSystemBus
    }

    /// The session bus address from `DBUS_SESSION_BUS_ADDRESS`, if set.
    package static func sessionBus(environment: [String: String]) -> String? {
        environment["DBUS_SESSION_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
    }

    package var description: String {
        switch self {
        case .unixPath(let path): return "unix:path=\(path)"
        case .unixAbstract(let name): return "unix:abstract=\(name)"
        }
    }

    /// One entry of an address list: a transport this client can use, or why it cannot.
    package enum Entry: Sendable, Hashable {
        case usable(DBusAddress)
        case unusable(text: String, reason: String)
    }

    /// Parses every entry of an address list, keeping the ones this client cannot use with the reason.
    ///
    /// - Throws: `DBusConnectionError.invalidAddress` when the text is empty or an entry is malformed (no `:`,
    ///   a key without `=`, a bad percent escape).
    package static func parseEntries(_ text: String) throws(DBusConnectionError) -> [Entry] {
        let parts = text.split(separator: ";", omittingEmptySubsequences: true).map(String.init)
        guard !parts.isEmpty else { throw .invalidAddress(text, reason: "empty address") }
        var entries: [Entry] = []
        for part in parts {
            guard let colon = part.firstIndex(of: ":") else {
                throw .invalidAddress(part, reason: "no transport name before ':'")
            }
            let transport = String(part[..<colon])
            var keys: [String: String] = [:]
            for pair in part[part.index(after: colon)...].split(separator: ",") {
                guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                    throw .invalidAddress(part, reason: "\"\(pair)\" is not key=value")
                }
                guard let value = unescape(pair[pair.index(after: equals)...]) else {
                    throw .invalidAddress(part, reason: "bad percent escape in \"\(pair)\"")
                }
                keys[String(pair[..<equals])] = value
            }
            entries.append(entry(transport: transport, keys: keys, text: part))
        }
        return entries
    }

    /// The addresses of a list that this client can use, in order.
    ///
    /// - Throws: `DBusConnectionError.invalidAddress` when the list is malformed or has no usable entry.
    package static func parseList(_ text: String) throws(DBusConnectionError) -> [DBusAddress] {
        let entries = try parseEntries(text)
        let usable = entries.compactMap { entry -> DBusAddress? in
            if case .usable(let address) = entry { return address }
            return nil
        }
        guard !usable.isEmpty else {
            let reasons = entries.compactMap { entry -> String? in
                if case .unusable(let text, let reason) = entry { return "\(text): \(reason)" }
                return nil
            }
            throw .invalidAddress(text, reason: reasons.joined(separator: "; "))
        }
        return usable
    }

    private static func entry(transport: String, keys: [String: String], text: String) -> Entry {
        guard transport == "unix" else { return .unusable(text: text, reason: "transport \(transport) not supported") }
        if let path = keys["path"], !path.isEmpty { return .usable(.unixPath(path)) }
        if let name = keys["abstract"], !name.isEmpty { return .usable(.unixAbstract(name)) }
        return .unusable(text: text, reason: "a client needs path= or abstract=")
    }

    /// Decodes `%XX` escapes; `nil` for a truncated or non-hex escape.
    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
