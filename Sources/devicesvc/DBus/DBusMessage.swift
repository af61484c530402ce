/// One D-Bus message: a method call, a method return, an error or a signal.
///
/// The header fields the specification defines are plain properties; the body is a list of values whose types make
/// up the `SIGNATURE` header field. `serial` is assigned by the connection when it sends the message.
///
/// ```swift
/// let call = DBusMessage.methodCall(
///     destination: "org.bluez", path: try DBusObjectPath("/org/bluez/hci0"),
///     interface: "org.bluez.Adapter1", member: "StartDiscovery")
/// ```
package struct DBusMessage: Sendable, Hashable {
    /// The message type, the second byte of the header.
    package enum Kind: UInt8, Sendable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    /// The flags byte of the header.
    package struct Flags: OptionSet, Sendable, Hashable {
        package let rawValue: UInt8

        package init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// "This message does not expect method return replies or error replies."
        package static let noReplyExpected = Flags(rawValue: 0x1)
        /// "The bus must not launch an owner for the destination name in response to this message."
        static let noAutoStart = Flags(rawValue: 0x2)
        /// The caller is prepared to wait for interactive authorization (polkit).
        static let allowInteractiveAuthorization = Flags(rawValue: 0x4)
    }

    /// The codes of the header fields.
    package enum HeaderField: UInt8 {
        case path = 1
        case interface = 2
        case member = 3
        case errorName = 4
        case replySerial = 5
        case destination = 6
        case sender = 7
        case signature = 8
        case unixFDs = 9
    }

    package var kind: Kind
    package var flags: Flags = []
    /// The sender's serial for this message; 0 until it is sent.
    package var serial: UInt32 = 0
    package var path: DBusObjectPath?
    package var interface: String?
    package var member: String?
    package var errorName: String?
    package var replySerial: UInt32?
    package var destination: String?
    package var sender: String?
    /// The number of Unix file descriptors that accompany the message (`UNIX_FDS`), when given.
    package var unixFDCount: UInt32?
    package var body: [DBusValue] = []

    /// The signature of the body.
    package var bodySignature: String {
        var text = ""
        for value in body { value.type.appendSignature(to: &text) }
        return text
    }

    package init(kind: Kind) {
        self.kind = kind
    }

    /// A method call.
    package static func methodCall(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        var message = DBusMessage(kind: .methodCall)
        message.destination = destination
        message.path = path
        message.interface = interface
        message.member = member
        message.body = body
        return message
    }

    /// A signal emission.
    package static func signal(
        path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        var message = DBusMessage(kind: .signal)
        message.path = path
        message.interface = interface
        message.member = member
        message.body = body
        return message
    }

    /// A successful reply to `call`.
    package static func methodReturn(to call: DBusMessage, body: [DBusValue] = []) -> DBusMessage {
        var message = DBusMessage(kind: .methodReturn)
        message.destination = call.sender
        message.replySerial = call.serial
        message.body = body
        return message
    }

    /// An error reply to `call`; the body is the human-readable message, as the specification recommends.
    package static func errorReply(to call: DBusMessage, name: String, message text: String) -> DBusMessage {
        var message = DBusMessage(kind: .error)
        message.destination = call.sender
        message.replySerial = call.serial
        message.errorName = name
        message.body = [.string(text)]
        return message
    }
}

extension DBusMessage: CustomStringConvertible {
    /// A one-line summary, e.g. `signal :1.5 /org/bluez/hci0 org.freedesktop.DBus.Properties.PropertiesChanged`.
    package var description: String {
        var parts: [String] = []
        switch kind {
        case .methodCall: parts.append("call")
        case .methodReturn: parts.append("return")
        case .error: parts.append("error \(errorName ?? "?")")
        case .signal: parts.append("signal")
        }
        parts.append("#\(serial)")
        if let replySerial { parts.append("reply-to #\(replySerial)") }
        if let sender { parts.append("from \(sender)") }
        if let destination { parts.append("to \(destination)") }
        if let path { parts.append(path.rawValue) }
        if let member { parts.append([interface, member].compactMap { $0 }.joined(separator: ".")) }
        if !body.isEmpty { parts.append("(\(bodySignature))") }
        return parts.joined(separator: " ")
    }
}
