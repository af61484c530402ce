import TestSupport
import Testing

@testable import devicesvc

@Suite struct DBusObjectPathTests {
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
        #expect(try DBusObjectPath("/org/bluez/hci0").isInNamespace(adapter))
        #expect(try DBusObjectPath("/org/bluez/hci0/dev_AA").isInNamespace(adapter))
        #expect(!(try DBusObjectPath("/org/bluez/hci01").isInNamespace(adapter)))
        #expect(try DBusObjectPath("/anything").isInNamespace(.root))
    }

    @Test func appendsAChildElement() throws {
        try expectEqual(DBusObjectPath.root.appending("org").rawValue, "/org")
        try expectEqual(DBusObjectPath("/org").appending("bluez").rawValue, "/org/bluez")
        #expect(throws: DBusWireError.self) { try DBusObjectPath("/org").appending("a/b") }
    }

    @Test func validatesBusInterfaceAndMemberNames() {
        #expect(DBusNames.isValidBusName(":1.42"))
        #expect(DBusNames.isValidBusName("org.bluez"))
        #expect(DBusNames.isValidBusName("org.example.with-dash"))
        #expect(!DBusNames.isValidBusName("org"))
        #expect(!DBusNames.isValidBusName("org.1bluez"))
        #expect(!DBusNames.isValidBusName("org..bluez"))
        #expect(DBusNames.isValidInterface("org.bluez.Device1"))
        #expect(!DBusNames.isValidInterface("org.bluez-x.Device1"))
        #expect(DBusNames.isValidMember("ReadValue"))
        #expect(!DBusNames.isValidMember("Read.Value"))
        #expect(!DBusNames.isValidMember(""))
        #expect(!DBusNames.isValidInterface(String(repeating: "a.", count: 128) + "b"))
    }
}
