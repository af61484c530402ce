/// Interfaces by name, each with its properties.
package typealias DBusInterfaceMap = [String: DBusPropertyMap]

/// Objects by path, as `GetManagedObjects` returns them.
package typealias DBusManagedObjects = [DBusObjectPath: DBusInterfaceMap]

/// `org.freedesktop.DBus.ObjectManager`: the object tree of a service such as BlueZ.
extension DBusConnection {
    /// The standard object manager interface.
    package static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

    /// Reads every object below the manager at `path` with all its interfaces and properties
    /// (`GetManagedObjects`, `a{oa{sa{sv}}}`).
    ///
    /// - Throws: `DBusError` from the service, `DBusConnectionError` as for any call or when the reply has another
    ///   signature.
    package func managedObjects(
        on destination: String, at path: DBusObjectPath = .root, timeout: Duration = defaultTimeout
    ) async throws -> DBusManagedObjects {
        let reply = try await call(
            destination: destination, path: path, interface: DBusConnection.objectManagerInterface,
            member: "GetManagedObjects", timeout: timeout)
        guard reply.bodySignature == "a{oa{sa{sv}}}", let entries = reply.body[0].dictionaryEntries else {
            throw DBusConnectionError.unexpectedSignature(
                member: "GetManagedObjects", expected: "a{oa{sa{sv}}}", actual: reply.bodySignature)
        }
        var objects: DBusManagedObjects = [:]
        for entry in entries {
            guard let objectPath = entry.key.objectPathValue,
                let interfaces = DBusInterfacesAdded.interfaceMap(entry.value)
            else { continue }  // unreachable: the signature was checked
            objects[objectPath] = interfaces
        }
        return objects
    }
}

/// A decoded `InterfacesAdded` signal: `(o object, a{sa{sv}} interfaces)`.
package struct DBusInterfacesAdded: Sendable, Hashable {
    /// The object that gained interfaces.
    package let objectPath: DBusObjectPath
    /// The added interfaces with their properties.
    package let interfaces: DBusInterfaceMap

    /// Decodes the signal.
    ///
    /// - Throws: `DBusConnectionError.unexpectedSignature` for another message or body signature.
    package init(_ message: DBusMessage) throws(DBusConnectionError) {
        guard message.kind == .signal, message.interface == DBusConnection.objectManagerInterface,
            message.member == "InterfacesAdded", message.bodySignature == "oa{sa{sv}}",
            let path = message.body[0].objectPathValue,
            let interfaces = DBusInterfacesAdded.interfaceMap(message.body[1])
        else {
            throw .unexpectedSignature(member: "InterfacesAdded", expected: "oa{sa{sv}}", actual: message.bodySignature)
        }
        objectPath = path
        self.interfaces = interfaces
    }

    /// A rule for `InterfacesAdded` from the manager `sender` at `managerPath`.
    package static func rule(sender: String, managerPath: DBusObjectPath = .root) -> DBusMatchRule {
        .signal(
            sender: sender, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded",
            path: managerPath)
    }

    /// Reads an `a{sa{sv}}` value.
    package static func interfaceMap(_ value: DBusValue) -> DBusInterfaceMap? {
        guard case .dictionary(.string, .dictionary(key: .string, value: .variant), let entries) = value else {
            return nil
        }
        var interfaces: DBusInterfaceMap = [:]
        for entry in entries {
            guard let name = entry.key.stringValue, let properties = entry.value.propertyMapValue else { return nil }
            interfaces[name] = properties
        }
        return interfaces
    }
}

/// A decoded `InterfacesRemoved` signal: `(o object, as interfaces)`.
package struct DBusInterfacesRemoved: Sendable, Hashable {
    /// The object that lost interfaces.
    package let objectPath: DBusObjectPath
    /// The names of the removed interfaces.
    package let interfaces: [String]

    /// Decodes the signal.
    ///
    /// - Throws: `DBusConnectionError.unexpectedSignature` for another message or body signature.
    package init(_ message: DBusMessage) throws(DBusConnectionError) {
        guard message.kind == .signal, message.interface == DBusConnection.objectManagerInterface,
            message.member == "InterfacesRemoved", message.bodySignature == "oas",
            let path = message.body[0].objectPathValue, let interfaces = message.body[1].stringArrayValue
        else {
            throw .unexpectedSignature(member: "InterfacesRemoved", expected: "oas", actual: message.bodySignature)
        }
        objectPath = path
        self.interfaces = interfaces
    }

    /// A rule for `InterfacesRemoved` from the manager `sender` at `managerPath`.
    package static func rule(sender: String, managerPath: DBusObjectPath = .root) -> DBusMatchRule {
        .signal(
            sender: sender, interface: DBusConnection.objectManagerInterface, member: "InterfacesRemoved",
            path: managerPath)
    }
}
