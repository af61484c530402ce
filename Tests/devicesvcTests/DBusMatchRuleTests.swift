import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

struct DBusMatchRuleTests {
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
        expectTrue(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: nil))
        expectFalse(rule.matches(propertiesChanged(from: ":1.5", interface: "org.bluez.Battery1"), senderOwner: nil))
        var elsewhere = propertiesChanged(from: ":1.5")
        elsewhere.path = try! DBusObjectPath("/org/bluez/hci1")
        expectFalse(rule.matches(elsewhere, senderOwner: nil))
    }

    @Test func aWellKnownSenderMatchesOnlyItsCurrentOwner() {
        let rule = DBusPropertiesChanged.rule(sender: "org.bluez")
        expectEqual(rule.wellKnownSender, "org.bluez")
        expectTrue(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: ":1.5"))
        expectFalse(rule.matches(propertiesChanged(from: ":1.6"), senderOwner: ":1.5"))
        expectFalse(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: nil))
    }

    @Test func theBusAndUniqueNamesNeedNoOwnerTracking() {
        expectNil(DBusMatchRule.signal(sender: "org.freedesktop.DBus").wellKnownSender)
        expectNil(DBusMatchRule.signal(sender: ":1.5").wellKnownSender)
    }

    @Test func pathNamespaceMatchesThePathAndBelow() throws {
        let rule = DBusPropertiesChanged.rule(sender: nil, pathNamespace: try DBusObjectPath("/org/bluez"))
        expectTrue(rule.matches(propertiesChanged(from: ":1.5"), senderOwner: nil))
        var other = propertiesChanged(from: ":1.5")
        other.path = try DBusObjectPath("/org/bluezz")
        expectFalse(rule.matches(other, senderOwner: nil))
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
        expectTrue(pathRule.matches(signal("/aa/bb/cc"), senderOwner: nil))
        expectTrue(pathRule.matches(signal("/aa/"), senderOwner: nil))
        expectFalse(pathRule.matches(signal("/aa/b"), senderOwner: nil))
        expectTrue(namespaceRule.matches(signal("org.bluez.Device1"), senderOwner: nil))
        expectTrue(namespaceRule.matches(signal("org.bluez"), senderOwner: nil))
        expectFalse(namespaceRule.matches(signal("org.bluezz"), senderOwner: nil))
    }

    @Test func onlySignalsMatchASignalRule() {
        var call = DBusMessage.methodCall(destination: nil, path: Self.device, interface: "a.b", member: "C")
        call.sender = ":1.1"
        expectFalse(DBusMatchRule.signal(member: "C").matches(call, senderOwner: nil))
    }
}
