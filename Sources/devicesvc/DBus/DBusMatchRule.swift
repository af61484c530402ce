/// A D-Bus match rule: which messages a subscriber wants.
///
/// The rule is sent to the bus with `AddMatch` (as `text`) so the bus routes matching signals to us, and it is
/// checked again locally (`matches`) so each subscriber sees only its own signals. Signals carry the sender's
/// unique name (`:1.5`), not the well-known name (`org.bluez`): local matching on a well-known `sender` compares
/// against the name's current owner, which the connection tracks for every subscription that names one.
///
/// ```swift
/// var rule = DBusMatchRule.signal(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
/// rule.sender = "org.bluez"
/// rule.pathNamespace = try DBusObjectPath("/org/bluez/hci0")
/// rule.text  // "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',…"
/// ```
package struct DBusMatchRule: Sendable, Hashable {
    /// The message type (`type=`); signals unless set otherwise.
    package var kind: DBusMessage.Kind? = .signal
    /// The sender (`sender=`): a unique name or a well-known name.
    package var sender: String?
    package var interface: String?
    package var member: String?
    /// The exact object path (`path=`).
    package var path: DBusObjectPath?
    /// The object path or any path below it (`path_namespace=`).
    package var pathNamespace: DBusObjectPath?
    package var destination: String?
    /// String arguments that must be equal (`argN=`), by argument index 0…63.
    package var arguments: [Int: String] = [:]
    /// Path-like arguments (`argNpath=`), by argument index 0…63.
    package var argumentPaths: [Int: String] = [:]
    /// A namespace the first argument must be in (`arg0namespace=`), e.g. `org.bluez` for `org.bluez.Device1`.
    package var argument0Namespace: String?

    package init() {}

    /// A rule for signals with the given fields.
    package static func signal(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: DBusObjectPath? = nil,
        pathNamespace: DBusObjectPath? = nil
    ) -> DBusMatchRule {
        var rule = DBusMatchRule()
        rule.sender = sender
        rule.interface = interface
        rule.member = member
        rule.path = path
        rule.pathNamespace = pathNamespace
        return rule
    }

    /// The rule in the bus's syntax, for `AddMatch` and `RemoveMatch`.
    package var text: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // "an apostrophe may be escaped with a backslash outside quotes": it's' -> 'it'\''s'
            let escaped = value.map { $0 == "'" ? "'\\''" : String($0) }.joined()
            parts.append("\(key)='\(escaped)'")
        }
        add("type", kind.map(DBusMatchRule.typeName))
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination)
        add("arg0namespace", argument0Namespace)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        for (index, value) in argumentPaths.sorted(by: { $0.key < $1.key }) { add("arg\(index)path", value) }
        return parts.joined(separator: ",")
    }

    /// Whether the rule names a well-known sender whose owner must be tracked to match locally.
    package var wellKnownSender: String? {
        guard let sender, !sender.hasPrefix(":"), sender != DBusConnection.busName else { return nil }
        return sender
    }

    /// Whether `message` matches the rule.
    ///
    /// - Parameter senderOwner: the current unique owner of `sender` when it is a well-known name.
    package func matches(_ message: DBusMessage, senderOwner: String?) -> Bool {
        if let kind, message.kind != kind { return false }
        if let sender, message.sender != sender {
            guard let senderOwner, message.sender == senderOwner else { return false }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isInNamespace(pathNamespace) else { return false }
        }
        if let destination, message.destination != destination { return false }
        for (index, expected) in arguments {
            guard index < message.body.count, case .string(let actual) = message.body[index], actual == expected else {
                return false
            }
        }
        for (index, expected) in argumentPaths {
            guard index < message.body.count else { return false }
            let actual: String
            switch message.body[index] {
            case .string(let text): actual = text
            case .objectPath(let path): actual = path.rawValue
            default: return false
            }
            guard DBusMatchRule.pathsMatch(actual, expected) else { return false }
        }
        if let namespace = argument0Namespace {
            guard case .string(let first)? = message.body.first, first == namespace || first.hasPrefix(namespace + ".")
            else { return false }
        }
        return true
    }

    /// `argNpath` semantics: equal, or one is a `/`-terminated prefix of the other.
    private static func pathsMatch(_ actual: String, _ expected: String) -> Bool {
        actual == expected || (expected.hasSuffix("/") && actual.hasPrefix(expected))
            || (actual.hasSuffix("/") && expected.hasPrefix(actual))
    }

    private static func typeName(_ kind: DBusMessage.Kind) -> String {
        switch kind {
        case .methodCall: return "method_call"
        case .methodReturn: return "method_return"
        case .error: return "error"
        case .signal: return "signal"
        }
    }
}

extension DBusMatchRule: CustomStringConvertible {
    package var description: String { text }
}
