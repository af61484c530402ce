import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// `GetManagedObjects` and `InterfacesAdded`/`InterfacesRemoved`, against the python-dbus service.
@Suite(
    .enabled(if: DBusTestEnvironment.hasDaemon && DBusTestEnvironment.hasPythonDBus, "needs dbus-daemon, python3-dbus"))
struct DBusObjectManagerTests {
    private static let manager = "org.example.Manager"
    private static let device = try! DBusObjectPath("/org/example/dev_kitchen")
    private static let deviceInterfaces: DBusInterfaceMap = [
        "org.example.Device1": ["Alias": .string("kitchen"), "RSSI": .int16(-42), "UUIDs": .strings(["180d"])],
        "org.example.Battery1": ["Percentage": .byte(77)],
    ]

    private func addDevice(_ connection: DBusConnection, _ service: PythonService) async throws -> DBusMessage {
        try await connection.call(
            destination: service.name, path: .root, interface: Self.manager, member: "AddDevice",
            body: [.string("kitchen")])
    }

    @Test func managedObjectsDecodeIntoNestedDictionaries() async throws {
        try await withPythonService { _, connection, service in
            _ = try await addDevice(connection, service)
            let objects = try await connection.managedObjects(on: service.name)
            expectEqual(objects.count, 2)
            expectEqual(objects[Self.device], Self.deviceInterfaces)
            expectEqual(objects[PythonService.thingPath]?[PythonService.interface]?["Level"], .int32(3))
        }
    }

    @Test func interfacesAddedAndRemovedSignalsDecode() async throws {
        try await withPythonService { _, connection, service in
            let added = Recorder<DBusInterfacesAdded>()
            let removed = Recorder<DBusInterfacesRemoved>()
            let addedSubscription = try await connection.subscribe(to: DBusInterfacesAdded.rule(sender: service.name)) {
                if let signal = try? DBusInterfacesAdded($0) { added.append(signal) }
            }
            let removedSubscription = try await connection.subscribe(
                to: DBusInterfacesRemoved.rule(sender: service.name)
            ) {
                if let signal = try? DBusInterfacesRemoved($0) { removed.append(signal) }
            }
            defer {
                addedSubscription.cancel()
                removedSubscription.cancel()
            }
            let reply = try await addDevice(connection, service)
            expectEqual(reply.body, [.objectPath(Self.device)])
            _ = try await connection.call(
                destination: service.name, path: .root, interface: Self.manager, member: "RemoveDevice",
                body: [.string("kitchen")])
            // Both signals were emitted before their method's reply, so they have been delivered.
            expectEqual(added.elements.map(\.objectPath), [Self.device])
            expectEqual(added.elements.first?.interfaces, Self.deviceInterfaces)
            expectEqual(removed.elements.map(\.objectPath), [Self.device])
            expectEqual(removed.elements.first?.interfaces, ["org.example.Device1", "org.example.Battery1"])
        }
    }

    @Test func interfacesAddedRejectsAWrongBody() throws {
        var message = DBusMessage.signal(
            path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded",
            body: [.objectPath(Self.device), .strings(["org.example.Device1"])])
        message.sender = ":1.1"
        #expect(throws: DBusConnectionError.self) { try DBusInterfacesAdded(message) }
    }
}
