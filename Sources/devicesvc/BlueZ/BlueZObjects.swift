import ContextBusDBus
import ContextBusWire
import Foundation

/// The names BlueZ uses on the bus (`doc/*-api.txt` of BlueZ 5).
enum BlueZ {
    /// The well-known name `bluetoothd` owns.
    static let serviceName = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let deviceInterface = "org.bluez.Device1"
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let descriptorInterface = "org.bluez.GattDescriptor1"
    /// Where BlueZ keeps its adapters and devices: `/org/bluez/hci0/dev_AA_BB_…`.
    static let rootPath = makePath("/org/bluez")

    /// A path from a literal that is valid by inspection.
    static func makePath(_ text: String) -> DBusObjectPath {
        // Only called with literals and paths built from validated elements.
        try! DBusObjectPath(text)
    }
}

/// An adapter (`org.bluez.Adapter1`), such as `hci0`.
struct BlueZAdapter: Sendable, Hashable {
    let path: DBusObjectPath
    /// The last element of the path: `hci0`.
    let name: String
    let address: String
    let isPowered: Bool
    let isDiscovering: Bool
}

/// A remote device (`org.bluez.Device1`).
struct BlueZDevice: Sendable, Hashable {
    let path: DBusObjectPath
    /// The adapter's path (`Adapter` property, else the path's parent).
    let adapterPath: DBusObjectPath
    let address: String
    /// `Name` (what the device advertised), else `Alias`; nil when neither is known.
    let name: String?
    /// The signal strength of the last advertisement; only while a discovery hears the device.
    let rssi: Int?
    let isConnected: Bool
    let isPaired: Bool
    let servicesResolved: Bool
    /// Advertised and resolved service UUIDs, lowercase 128-bit.
    let uuids: [String]
}

/// A GATT characteristic (`org.bluez.GattCharacteristic1`).
struct GattCharacteristic: Sendable, Hashable {
    let path: DBusObjectPath
    let servicePath: DBusObjectPath?
    /// Lowercase 128-bit UUID.
    let uuid: String
    /// `read`, `write`, `write-without-response`, `notify`, …
    let flags: [String]
    /// The cached `Value`, when BlueZ has one.
    let value: Data?
}

/// A GATT service (`org.bluez.GattService1`).
struct GattService: Sendable, Hashable {
    let path: DBusObjectPath
    let devicePath: DBusObjectPath?
    let uuid: String
    let isPrimary: Bool
}

/// A GATT descriptor (`org.bluez.GattDescriptor1`).
struct GattDescriptor: Sendable, Hashable {
    let path: DBusObjectPath
    let characteristicPath: DBusObjectPath?
    let uuid: String
}

extension BlueZAdapter {
    init?(path: DBusObjectPath, properties: DBusPropertyMap) {
        guard let address = properties["Address"]?.stringValue else { return nil }
        self.init(
            path: path, name: path.lastElement, address: address,
            isPowered: properties["Powered"]?.boolValue ?? false,
            isDiscovering: properties["Discovering"]?.boolValue ?? false)
    }
}

extension BlueZDevice {
    init?(path: DBusObjectPath, properties: DBusPropertyMap) {
        guard let address = properties["Address"]?.stringValue else { return nil }
        let rssi = properties["RSSI"]?.int16Value.map(Int.init)
        self.init(
            path: path, adapterPath: properties["Adapter"]?.objectPathValue ?? path.parent,
            address: address.inCase(upper: true),
            name: properties["Name"]?.stringValue ?? properties["Alias"]?.stringValue, rssi: rssi,
            isConnected: properties["Connected"]?.boolValue ?? false,
            isPaired: properties["Paired"]?.boolValue ?? false,
            servicesResolved: properties["ServicesResolved"]?.boolValue ?? false,
            uuids: (properties["UUIDs"]?.stringArrayValue ?? []).map { $0.inCase(upper: false) })
    }

    /// The device as `device.list` reports it.
    var info: DeviceInfo? {
        guard let address = BluetoothAddress(address) else { return nil }
        return DeviceInfo(
            address: address, name: name, rssi: rssi, connected: isConnected, paired: isPaired,
            services: uuids.compactMap(BluetoothUUID.init))
    }
}

extension GattCharacteristic {
    init?(path: DBusObjectPath, properties: DBusPropertyMap) {
        guard let uuid = properties["UUID"]?.stringValue else { return nil }
        self.init(
            path: path, servicePath: properties["Service"]?.objectPathValue, uuid: uuid.inCase(upper: false),
            flags: properties["Flags"]?.stringArrayValue ?? [], value: properties["Value"]?.bytesValue.map { Data($0) })
    }
}

extension String {
    /// The text in upper or lower case; itself, not a copy, when it is in that case already, as BlueZ's addresses
    /// (upper) and UUIDs (lower) are: the tree's typed views are built for every lookup.
    func inCase(upper: Bool) -> String {
        let wrong: ClosedRange<UInt8> =
            upper ? UInt8(ascii: "a")...UInt8(ascii: "z") : UInt8(ascii: "A")...UInt8(ascii: "Z")
        guard utf8.contains(where: { wrong.contains($0) || $0 >= 0x80 }) else { return self }
        return upper ? uppercased() : lowercased()
    }
}

extension DBusObjectPath {
    /// The last element (`hci0` of `/org/bluez/hci0`); empty for the root.
    var lastElement: String {
        guard let slash = rawValue.lastIndex(of: "/") else { return rawValue }
        return String(rawValue[rawValue.index(after: slash)...])
    }

    /// The parent path; the root for a top-level element and for the root itself.
    var parent: DBusObjectPath {
        guard let slash = rawValue.lastIndex(of: "/"), slash != rawValue.startIndex else { return .root }
        return BlueZ.makePath(String(rawValue[..<slash]))
    }
}
