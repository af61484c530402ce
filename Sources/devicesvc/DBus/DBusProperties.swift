/// Property values by name, each with its variant removed.
package typealias DBusPropertyMap = [String: DBusValue]

/// `org.freedesktop.DBus.Properties`: reading and writing properties of remote objects.
extension DBusConnection {
    /// The standard properties interface.
    package static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// Reads one property (`Get`); the value is returned without its variant.
    ///
    /// - Throws: `DBusError` such as `org.freedesktop.DBus.Error.UnknownProperty`, `DBusConnectionError` as for any
    ///   call or when the reply is not one variant.
    package func property(
        _ name: String, of interface: String, at path: DBusObjectPath, on destination: String,
        timeout: Duration = defaultTimeout
    ) async throws -> DBusValue {
        let reply = try await call(
            destination: destination, path: path, interface: DBusConnection.propertiesInterface, member: "Get",
            body: [.string(interface), .string(name)], timeout: timeout)
        guard reply.body.count == 1, case .variant(let value) = reply.body[0] else {
            throw DBusConnectionError.unexpectedSignature(member: "Get", expected: "v", actual: reply.bodySignature)
        }
        return value
    }

    /// Reads all properties of one interface (`GetAll`).
    package func properties(
        of interface: String, at path: DBusObjectPath, on destination: String, timeout: Duration = defaultTimeout
    ) async throws -> DBusPropertyMap {
        let reply = try await call(
            destination: destination, path: path, interface: DBusConnection.propertiesInterface, member: "GetAll",
            body: [.string(interface)], timeout: timeout)
        guard reply.bodySignature == "a{sv}", let map = reply.body[0].propertyMapValue else {
            throw DBusConnectionError.unexpectedSignature(
                member: "GetAll", expected: "a{sv}", actual: reply.bodySignature)
        }
        return map
    }

    /// Writes one property (`Set`); `value` is wrapped in a variant.
    func setProperty(
        _ name: String, to value: DBusValue, of interface: String, at path: DBusObjectPath, on destination: String,
        timeout: Duration = defaultTimeout
    ) async throws {
        _ = try await call(
            destination: destination, path: path, interface: DBusConnection.propertiesInterface, member: "Set",
            body: [.string(interface), .string(name), .variant(value)], timeout: timeout)
    }
}

/// A decoded `PropertiesChanged` signal: `(s interface, a{sv} changed, as invalidated)`.
package struct DBusPropertiesChanged: Sendable, Hashable {
    /// The object whose properties changed.
    package let path: DBusObjectPath
    /// The unique name of the object's owner.
    package let sender: String?
    /// The interface whose properties changed, e.g. `org.bluez.Device1`.
    package let interface: String
    /// New values, without their variants.
    package let changed: DBusPropertyMap
    /// Properties that changed but whose values were not sent.
    package let invalidated: [String]

    /// Decodes the signal.
    ///
    /// - Throws: `DBusConnectionError.unexpectedSignature` when the message is not a `PropertiesChanged` signal
    ///   with body `sa{sv}as`.
    package init(_ message: DBusMessage) throws(DBusConnectionError) {
        guard message.kind == .signal, message.interface == DBusConnection.propertiesInterface,
            message.member == "PropertiesChanged", let path = message.path, message.bodySignature == "sa{sv}as",
            let interface = message.body[0].stringValue, let changed = message.body[1].propertyMapValue,
            let invalidated = message.body[2].stringArrayValue
        else {
            throw .unexpectedSignature(
                member: "PropertiesChanged", expected: "sa{sv}as", actual: message.bodySignature)
        }
        self.path = path
        self.sender = message.sender
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
    }

    /// A rule for `PropertiesChanged` from `sender`, at `path` or below `pathNamespace`, of `interface` (arg0).
    package static func rule(
        sender: String?, path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, interface: String? = nil
    ) -> DBusMatchRule {
        var rule = DBusMatchRule.signal(
            sender: sender, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged", path: path,
            pathNamespace: pathNamespace)
        if let interface { rule.arguments[0] = interface }
        return rule
    }
}
