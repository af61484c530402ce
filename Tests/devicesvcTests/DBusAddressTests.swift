import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

struct DBusAddressTests {
    @Test func parsesAPathAddress() throws {
        expectEqual(
            try DBusAddress.parseList("unix:path=/run/dbus/system_bus_socket"),
            [
                .unixPath("/run/dbus/system_bus_socket")
            ])
    }

    @Test func parsesAnAbstractAddressWithAGuid() throws {
        try expectEqual(DBusAddress.parseList("unix:abstract=/tmp/dbus-x,guid=0123"), [.unixAbstract("/tmp/dbus-x")])
    }

    @Test func keepsUsableEntriesOfAListInOrder() throws {
        let list = "tcp:host=localhost,port=1;unix:abstract=one;unix:dir=/tmp;unix:path=/two"
        try expectEqual(DBusAddress.parseList(list), [.unixAbstract("one"), .unixPath("/two")])
    }

    @Test func decodesPercentEscapes() throws {
        try expectEqual(DBusAddress.parseList("unix:path=/tmp/a%20b%2cc"), [.unixPath("/tmp/a b,c")])
    }

    @Test(arguments: ["", ";", "nocolon", "unix:path", "unix:path=/a%2", "unix:path=/a%zz"])
    func rejectsMalformedAddresses(text: String) {
        #expect(throws: DBusConnectionError.self) { try DBusAddress.parseList(text) }
    }

    @Test func rejectsAListWithoutUsableEntryNamingWhy() {
        #expect(
            throws: DBusConnectionError.invalidAddress("tcp:host=x", reason: "tcp:host=x: transport tcp not supported")
        ) {
            try DBusAddress.parseList("tcp:host=x")
        }
    }

    @Test func theSystemBusAddressComesFromTheEnvironmentOrTheDefault() {
        expectEqual(DBusAddress.systemBus(environment: [:]), "unix:path=/run/dbus/system_bus_socket")
        expectEqual(DBusAddress.systemBus(environment: ["DBUS_SYSTEM_BUS_ADDRESS": ""]), DBusAddress.defaultSystemBus)
        expectEqual(DBusAddress.systemBus(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x"]), "unix:path=/x")
    }
}
