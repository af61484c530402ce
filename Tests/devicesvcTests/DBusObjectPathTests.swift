import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

struct DBusObjectPathTests {
    @Test(arguments: ["/", "/org", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", "/a_1/B2"])
    func acceptsValidPaths(text: String) throws {
        try expectEqual(DBusObjectPath(text).rawValue, text)
    }

    @Test(arguments: ["", "org", "/org/", "//", "/org//bluez", "/org/blu-ez", "/org/é"])
    func rejectsInvalidPaths(text: String) {
        #expect(throws: DBusWireError.invalidObjectPath(text)) { try DBusObjectPath(text) }
    }

    @Test func namespaceContainsItselfAndItsDescendantsOnly() throws {
        let adapter = try DBusObjectPath("/org/bluez/hci0")
        expectTrue(try DBusObjectPath("/org/bluez/hci0").isInNamespace(adapter))
        expectTrue(try DBusObjectPath("/org/bluez/hci0/dev_AA").isInNamespace(adapter))
        expectFalse((try DBusObjectPath("/org/bluez/hci01").isInNamespace(adapter)))
        expectTrue(try DBusObjectPath("/anything").isInNamespace(.root))
    }

    @Test func appendsAChildElement() throws {
        try expectEqual(DBusObjectPath.root.appending("org").rawValue, "/org")
        try expectEqual(DBusObjectPath("/org").appending("bluez").rawValue, "/org/bluez")
        #expect(throws: DBusWireError.self) { try DBusObjectPath("/org").appending("a/b") }
    }

    @Test func validatesBusInterfaceAndMemberNames() {
        expectTrue(DBusNames.isValidBusName(":1.42"))
        expectTrue(DBusNames.isValidBusName("org.bluez"))
        expectTrue(DBusNames.isValidBusName("org.example.with-dash"))
        expectFalse(DBusNames.isValidBusName("org"))
        expectFalse(DBusNames.isValidBusName("org.1bluez"))
        expectFalse(DBusNames.isValidBusName("org..bluez"))
        expectTrue(DBusNames.isValidInterface("org.bluez.Device1"))
        expectFalse(DBusNames.isValidInterface("org.bluez-x.Device1"))
        expectTrue(DBusNames.isValidMember("ReadValue"))
        expectFalse(DBusNames.isValidMember("Read.Value"))
        expectFalse(DBusNames.isValidMember(""))
        expectFalse(DBusNames.isValidInterface(String(repeating: "a.", count: 128) + "b"))
    }
}
