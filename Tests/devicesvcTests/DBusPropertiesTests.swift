import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// `org.freedesktop.DBus.Properties` helpers and `PropertiesChanged` decoding, against the python-dbus service.
@Suite(
    .enabled(if: DBusTestEnvironment.hasDaemon && DBusTestEnvironment.hasPythonDBus, "needs dbus-daemon, python3-dbus"))
struct DBusPropertiesTests {
    private static let thing = PythonService.thingPath
    private static let interface = PythonService.interface

    @Test func getReadsOnePropertyWithoutItsVariant() async throws {
        try await withPythonService { _, connection, service in
            let level = try await connection.property("Level", of: Self.interface, at: Self.thing, on: service.name)
            expectEqual(level, .int32(3))
        }
    }

    @Test func getAllReadsEveryPropertyOfTheInterface() async throws {
        try await withPythonService { _, connection, service in
            let properties = try await connection.properties(of: Self.interface, at: Self.thing, on: service.name)
            expectEqual(properties, ["Name": .string("thing"), "Level": .int32(3), "Enabled": .boolean(false)])
        }
    }

    @Test func getOfAnUnknownPropertyFailsWithTheServiceError() async throws {
        try await withPythonService { _, connection, service in
            do {
                _ = try await connection.property("Missing", of: Self.interface, at: Self.thing, on: service.name)
                Issue.record("the call succeeded")
            } catch let error as DBusError {
                expectEqual(error.name, DBusError.unknownProperty)
                expectTrue(error.message.contains("Missing"))
            }
        }
    }

    @Test func setWritesAPropertyAndItsPropertiesChangedSignalDecodes() async throws {
        try await withPythonService { _, connection, service in
            let stream = try await connection.signals(
                matching: DBusPropertiesChanged.rule(sender: service.name, path: Self.thing, interface: Self.interface))
            try await connection.setProperty(
                "Enabled", to: .boolean(true), of: Self.interface, at: Self.thing, on: service.name)
            let change = try DBusPropertiesChanged(try await firstElement(of: stream))
            expectEqual(change.path, Self.thing)
            expectEqual(change.sender, service.uniqueName)
            expectEqual(change.interface, Self.interface)
            expectEqual(change.changed, ["Enabled": .boolean(true)])
            expectEqual(change.invalidated, ["Name"])
            #expect(
                try await connection.property("Enabled", of: Self.interface, at: Self.thing, on: service.name)
                    == .boolean(true))
        }
    }

    @Test func propertiesChangedRejectsAnotherSignal() throws {
        let ping = DBusMessage.signal(path: Self.thing, interface: Self.interface, member: "Ping", body: [.string("x")])
        #expect(
            throws: DBusConnectionError.unexpectedSignature(
                member: "PropertiesChanged", expected: "sa{sv}as", actual: "s")
        ) {
            try DBusPropertiesChanged(ping)
        }
    }

    @Test func propertiesChangedRuleFiltersOnInterfaceAsFirstArgument() {
        let rule = DBusPropertiesChanged.rule(
            sender: "org.bluez", pathNamespace: try! DBusObjectPath("/org/bluez/hci0"), interface: "org.bluez.Device1")
        expectTrue(
            rule.text
                == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',"
                + "member='PropertiesChanged',path_namespace='/org/bluez/hci0',arg0='org.bluez.Device1'")
    }
}
