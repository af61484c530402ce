import ContextBusSupport

/// An error reply from a D-Bus peer: the error name (such as `org.bluez.Error.Failed`) and its message.
///
/// Match on the name to react to a specific failure:
///
/// ```swift
/// do { try await device.call(...) } catch let error as DBusError where error.name == "org.bluez.Error.InProgress" { … }
/// ```
package struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The D-Bus error name.
    package let name: String
    /// The human-readable message: the first string of the error's body, or empty.
    package let message: String

    package init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// The error carried by an error reply.
    package init(reply: DBusMessage) {
        name = reply.errorName ?? "org.freedesktop.DBus.Error.Failed"
        message = reply.body.first?.stringValue ?? ""
    }

    package var description: String { message.isEmpty ? name : "\(name): \(message)" }

    // MARK: - Names the bus itself uses

    package static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    package static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    package static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    package static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    package static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    package static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    package static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    package static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    package static let noReply = "org.freedesktop.DBus.Error.NoReply"
}

/// Why a connection could not be made, or a call could not complete, apart from an error reply.
package enum DBusConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The address string is malformed or names no transport this client supports.
    case invalidAddress(String, reason: String)
    /// A socket operation failed; `errno` is the C error code.
    case system(operation: String, errno: Int32)
    /// The server rejected or broke the SASL handshake.
    case authenticationFailed(String)
    /// No reply arrived within our timeout; a reply arriving later is dropped.
    case timedOut(member: String, after: Duration)
    /// The connection is closed: by `close()`, by the peer, or after a protocol error. Pending calls fail with
    /// this error, and so do later calls.
    case disconnected(reason: String)
    /// The bytes from the peer could not be read as D-Bus messages; the connection was closed.
    case protocolViolation(DBusWireError)
    /// A message could not be encoded.
    case invalidMessage(DBusWireError)
    /// A reply's or signal's body does not have the signature the helper expects.
    case unexpectedSignature(member: String, expected: String, actual: String)

    package var description: String {
        switch self {
        case .invalidAddress(let text, let reason): return "invalid D-Bus address \"\(text)\": \(reason)"
        case .system(let operation, let code): return "D-Bus \(operation) failed: \(systemErrorMessage(code))"
        case .authenticationFailed(let reason): return "D-Bus authentication failed: \(reason)"
        case .timedOut(let member, let after): return "D-Bus call \(member) got no reply within \(after)"
        case .disconnected(let reason): return "D-Bus connection closed: \(reason)"
        case .protocolViolation(let error): return "D-Bus protocol violation: \(error)"
        case .invalidMessage(let error): return "D-Bus message cannot be sent: \(error)"
        case .unexpectedSignature(let member, let expected, let actual):
            return "D-Bus \(member) body has signature \"\(actual)\", expected \"\(expected)\""
        }
    }
}
