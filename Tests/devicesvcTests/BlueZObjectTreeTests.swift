import TestSupport
import Testing

@testable import ContextBusDBus
@testable import ContextBusWire
@testable import devicesvc

struct BlueZObjectTreeTests {
    static let adapterPath = path("/org/bluez/hci0")
    static let devicePath = path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01")
    static let servicePath = path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c")
    static let batteryPath = path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c/char000d")
    static let echoPath = path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service001c/char001d")

    static func path(_ text: String) -> DBusObjectPath { try! DBusObjectPath(text) }

    func makeTree() -> BlueZObjectTree {
        BlueZObjectTree(objects: [
            Self.adapterPath: [
                BlueZ.adapterInterface: ["Address": .string("00:1A:7D:DA:71:0A"), "Powered": .boolean(true)]
            ],
            Self.devicePath: [
                BlueZ.deviceInterface: [
                    "Address": .string("AA:BB:CC:DD:EE:01"), "Name": .string("Thermo-1"),
                    "Adapter": .objectPath(Self.adapterPath), "Connected": .boolean(false),
                    "UUIDs": .strings(["0000180F-0000-1000-8000-00805f9b34fb"]),
                ]
            ],
            Self.servicePath: [BlueZ.serviceInterface: ["UUID": .string("0000180f-0000-1000-8000-00805f9b34fb")]],
            Self.batteryPath: [
                BlueZ.characteristicInterface: [
                    "UUID": .string("00002a19-0000-1000-8000-00805f9b34fb"), "Flags": .strings(["read", "notify"]),
                ]
            ],
            Self.echoPath: [
                BlueZ.characteristicInterface: ["UUID": .string("c0defeed-0001-4000-8000-000000000000")]
            ],
        ])
    }

    @Test(arguments: ["2a19", "2A19", "00002a19-0000-1000-8000-00805f9b34fb", "00002A19-0000-1000-8000-00805F9B34FB"])
    func findsACharacteristicByShortOrFullUUID(_ text: String) {
        let found = makeTree().characteristic(BluetoothUUID(text)!, onDevice: Self.devicePath)
        expectEqual(found?.path, Self.batteryPath)
        expectEqual(found?.flags, ["read", "notify"])
    }

    @Test func findsA128BitVendorCharacteristic() {
        let uuid = BluetoothUUID("C0DEFEED-0001-4000-8000-000000000000")!
        expectEqual(makeTree().characteristic(uuid, onDevice: Self.devicePath)?.path, Self.echoPath)
    }

    @Test func aUUIDFoundTwiceOnOneDeviceGivesTheCharacteristicWithTheSmallestPath() {
        var objects = makeTree().objects
        let later = Self.path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service0030/char0031")
        let earlier = Self.path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service0008/char0009")
        for path in [later, earlier] {
            objects[path] = [BlueZ.characteristicInterface: ["UUID": .string("00002A19-0000-1000-8000-00805F9B34FB")]]
        }
        let tree = BlueZObjectTree(objects: objects)
        expectEqual(tree.characteristic(BluetoothUUID("2a19")!, onDevice: Self.devicePath)?.path, earlier)
    }

    @Test func doesNotFindACharacteristicOfAnotherDevice() {
        let other = Self.path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_02")
        expectNil(makeTree().characteristic(BluetoothUUID("2a19")!, onDevice: other))
    }

    @Test func readsAdaptersAndDevices() {
        let tree = makeTree()
        expectEqual(tree.adapters.map(\.name), ["hci0"])
        let device = tree.device(BluetoothAddress("aa:bb:cc:dd:ee:01")!, onAdapter: "hci0")
        expectEqual(device?.name, "Thermo-1")
        expectEqual(device?.uuids, ["0000180f-0000-1000-8000-00805f9b34fb"])
        expectNil(tree.device(BluetoothAddress("AA:BB:CC:DD:EE:01")!, onAdapter: "hci1"))
        expectEqual(tree.devicePath(containing: Self.batteryPath), Self.devicePath)
    }

    @Test func propertiesChangedUpdatesAndInvalidates() throws {
        var tree = makeTree()
        tree.apply(
            try DBusPropertiesChanged(
                .signal(
                    path: Self.devicePath, interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                    body: [
                        .string(BlueZ.deviceInterface),
                        .propertyMap(["Connected": .boolean(true), "RSSI": .int16(-50)]), .strings(["Name"]),
                    ])))
        let device = try #require(tree.device(at: Self.devicePath))
        expectTrue(device.isConnected)
        expectEqual(device.rssi, -50)
        expectNil(device.name)
    }

    @Test func propertiesChangedForAnUnknownObjectIsIgnored() throws {
        var tree = makeTree()
        let before = tree
        tree.apply(
            try DBusPropertiesChanged(
                .signal(
                    path: Self.path("/org/bluez/hci0/dev_00_00_00_00_00_00"),
                    interface: DBusConnection.propertiesInterface, member: "PropertiesChanged",
                    body: [.string(BlueZ.deviceInterface), .propertyMap(["Connected": .boolean(true)]), .strings([])])))
        expectEqual(tree, before)
    }

    @Test func interfacesAddedAndRemovedKeepTheTreeCurrent() throws {
        var tree = makeTree()
        let newPath = Self.path("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service0011/char0012")
        tree.apply(
            try DBusInterfacesAdded(
                .signal(
                    path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded",
                    body: [
                        .objectPath(newPath),
                        .dictionary(
                            key: .string, value: .dictionary(key: .string, value: .variant),
                            [
                                DBusDictionaryEntry(
                                    .string(BlueZ.characteristicInterface),
                                    .propertyMap(["UUID": .string("00002a6e-0000-1000-8000-00805f9b34fb")]))
                            ]),
                    ])))
        expectEqual(tree.characteristic(BluetoothUUID("2a6e")!, onDevice: Self.devicePath)?.path, newPath)
        tree.apply(
            try DBusInterfacesRemoved(
                .signal(
                    path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesRemoved",
                    body: [.objectPath(newPath), .strings([BlueZ.characteristicInterface])])))
        expectNil(tree.characteristic(BluetoothUUID("2a6e")!, onDevice: Self.devicePath))
        expectNil(tree.objects[newPath])
    }

    @Test func aDeviceWithoutAnAddressIsNotADevice() {
        let tree = BlueZObjectTree(objects: [Self.devicePath: [BlueZ.deviceInterface: ["Name": .string("x")]]])
        expectEmpty(tree.devices())
    }
}
