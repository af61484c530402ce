import TestSupport
import Testing

@testable import devicesvc

@Suite struct DBusMatchRuleTests {
    private static let device = try! DBusObjectPath("/org/bluez/hci0/dev_AA")

    private func propertiesChanged(from sender: String, interface: String = "org.bluez.Device1") -> DBusMessage {
        var message = DBusMessage.signal(
            path: Self.device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            body: [.string(interface), .propertyMap([:]), .strings([])])
        message.sender = sender
        return message
    }

    @Test func writesTheBusSyntaxWithEscapedApostrophes() {
        var rule = DBusMatchRule.signal(sender: "org.bluez", member: "It's")
        rule.arguments[1] = "a'b"
        rule.argumentPaths[0] = "/org/"
        expectEqual(rule.text, "type='signal',sender='org.bluez',member='It'\\''s',arg1='a'\\''b',arg0path='/org/'")
    }

    @Test func matchesOnInterfaceMemberPathAndFirstArgument() {
        let rule = DBusPropertiesChanged.rule(sender: nil, path: Self.device, interface: "org.bluez.Device1")
        #expect(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: nil))
        #expect(!rule.matches(propertiesChanged(from: ":1.5", interface: "org.bluez.Battery1"), senderOwner: nil))
        var elsewhere = propertiesChanged(from: ":1.5")
        elsewhere.path = try! DBusObjectPath("/org/bluez/hci1")
        #expect(!rule.matches(elsewhere, senderOwner: nil))
    }

    @Test func aWellKnownSenderMatchesOnlyItsCurrentOwner() {
        let rule = DBusPropertiesChanged.rule(sender: "org.bluez")
        expectEqual(rule.wellKnownSender, "org.bluez")
        #expect(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: ":1.5"))
        #expect(!rule.matches(propertiesChanged(from: ":1.6"), senderOwner: ":1.5"))
        #expect(!rule.matches(propertiesChanged(from: ":1.5"), senderOwner: nil))
    }

    @Test func theBusAndUniqueNamesNeedNoOwnerTracking() {
        #expect(DBusMatchRule.signal(sender: "org.freedesktop.DBus").wellKnownSender == nil)
        #expect(DBusMatchRule.signal(sender: ":1.5").wellKnownSender == nil)
    }

    @Test func pathNamespaceMatchesThePathAndBelow() throws {
        let rule = DBusPropertiesChanged.rule(sender: nil, pathNamespace: try DBusObjectPath("/org/bluez"))
        #expect(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: nil))
        var other = propertiesChanged(from: ":1.5")
        other.path = try DBusObjectPath("/org/bluezz")
        #expect(!rule.matches(other, senderOwner: nil))
    }

    @Test func argumentPathAndNamespaceKeysFollowTheSpecification() {
        var pathRule = DBusMatchRule.signal()
        pathRule.argumentPaths[0] = "/aa/bb/"
        var namespaceRule = DBusMatchRule.signal()
        namespaceRule.argument0Namespace = "org.bluez"
        func signal(_ argument: String) -> DBusMessage {
            var message = DBusMessage.signal(path: .root, interface: "a.b", member: "C", body: [.string(argument)])
            message.sender = ":1.1"
            return message
        }
        #expect(pathRule.matches(signal("/aa/bb/cc"), senderOwner: nil))
        #expect(pathRule.matches(signal("/aa/"), senderOwner: nil))
        #expect(!pathRule.matches(signal("/aa/b"), senderOwner: nil))
        #expect(namespaceRule.matches(signal("org.bluez.Device1"), senderOwner: nil))
        #expect(namespaceRule.matches(signal("org.bluez"), senderOwner: nil))
        #expect(!namespaceRule.matches(signal("org.bluezz"), senderOwner: nil))
    }

    @Test func onlySignalsMatchASignalRule() {
        var call = DBusMessage.methodCall(destination: nil, path: Self.device, interface: "a.b", member: "C")
        call.sender = ":1.1"
        #expect(!DBusMatchRule.signal(member: "C").matches(call, senderOwner: nil))
    }
}
