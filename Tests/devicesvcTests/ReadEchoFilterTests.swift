import Foundation
import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// `ReadEchoFilter`: which `Value` signals are a read's echo (`.readEcho`) and which are notifications
/// (`.propertiesChanged`, in their place in the order), given that BlueZ signals a read's value just before its reply.
struct ReadEchoFilterTests {
    static let level = BlueZ.makePath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d")
    static let other = BlueZ.makePath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_02/service000c/char000d")

    static func value(
        _ bytes: [UInt8], at path: DBusObjectPath = level, also: DBusPropertyMap = [:]
    ) throws
        -> BlueZEvent
    {
        var changed = also
        changed["Value"] = .bytes(bytes)
        return .propertiesChanged(
            try DBusPropertiesChanged(
                .signal(
                    path: path, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                    body: [.string(BlueZ.characteristicInterface), .propertyMap(changed), .strings([])])))
    }

    /// The bytes of a notification (`.propertiesChanged`).
    static func bytes(_ event: BlueZEvent?) -> [UInt8]? {
        guard case .propertiesChanged(let change) = event else { return nil }
        return change.changed["Value"]?.bytesValue
    }

    /// The bytes of a read's echo (`.readEcho`).
    static func echo(_ event: BlueZEvent?) -> [UInt8]? {
        guard case .readEcho(let change) = event else { return nil }
        return change.changed["Value"]?.bytesValue
    }

    @Test func theValueSignalJustBeforeAReadsReplyWithTheSameBytesIsItsEcho() throws {
        var filter = ReadEchoFilter()
        let read = filter.readStarting(at: Self.level)
        expectNil(filter.release())
        expectTrue(filter.hold(try Self.value([0x57])))
        expectEqual(Self.echo(filter.readEnded(read, answer: [0x57])), [0x57])
        expectEqual(filter.echoes, 1)
        expectTrue(filter.reads.isEmpty)
        // No read on its way: a value is a notification, not held.
        expectTrue(!filter.hold(try Self.value([0x57])))
    }

    @Test func aNotificationArrivingWhileAReadIsOnItsWayIsReleasedInOrderByTheNextMessage() throws {
        var filter = ReadEchoFilter()
        let read = filter.readStarting(at: Self.level)
        // The notification, then the read's echo: the echo's arrival releases the notification.
        expectTrue(filter.hold(try Self.value([1])))
        expectEqual(Self.bytes(filter.release()), [1])
        expectTrue(filter.hold(try Self.value([1])))
        expectEqual(Self.echo(filter.readEnded(read, answer: [1])), [1])
        expectEqual(filter.echoes, 1)
    }

    @Test func aFailedReadOrOtherBytesOrAnotherReadsReplyReleaseTheHeldSignal() throws {
        var filter = ReadEchoFilter()
        let failed = filter.readStarting(at: Self.level)
        expectTrue(filter.hold(try Self.value([2])))
        expectEqual(Self.bytes(filter.readEnded(failed, answer: nil)), [2])
        let differing = filter.readStarting(at: Self.level)
        expectTrue(filter.hold(try Self.value([3])))
        expectEqual(Self.bytes(filter.readEnded(differing, answer: [4])), [3])
        let here = filter.readStarting(at: Self.level)
        let there = filter.readStarting(at: Self.other)
        expectTrue(filter.hold(try Self.value([5])))
        expectEqual(Self.bytes(filter.readEnded(there, answer: [5])), [5])
        expectNil(filter.readEnded(here, answer: [5]))
        expectEqual(filter.echoes, 0)
    }

    @Test func onlyASignalOfTheValueAloneOnACharacteristicBeingReadIsHeld() throws {
        var filter = ReadEchoFilter()
        _ = filter.readStarting(at: Self.level)
        expectTrue(!filter.hold(try Self.value([1], at: Self.other)))
        expectTrue(!filter.hold(try Self.value([1], also: ["Notifying": .boolean(true)])))
        expectTrue(!filter.hold(.appeared))
    }
}
