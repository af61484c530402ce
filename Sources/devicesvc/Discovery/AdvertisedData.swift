import ContextBusDBus
import ContextBusWire
import Foundation

/// What a device advertises, as BlueZ holds it in the device's `Device1` properties: the data of a
/// `device.advertisement` event.
///
/// BlueZ documents `ManufacturerData` as `a{qv}` and `ServiceData` as `a{sv}`, each variant an `ay`. Anything else (a
/// property of another type, an entry whose key or value is not of those types, a service data key that is not a
/// UUID) is left out and counted in `malformed`: a misbehaving stack or device never fails the discovery.
struct AdvertisedData: Sendable, Hashable {
    /// The advertised name (`Name`; not `Alias`, which BlueZ makes up from the address).
    var name: String?
    var rssi: Int?
    var txPower: Int?
    /// By company id as 4 lowercase hex digits (`004c`).
    var manufacturerData: [String: Data] = [:]
    /// By lowercase 128-bit UUID.
    var serviceData: [String: Data] = [:]
    /// Lowercase 128-bit UUIDs.
    var services: [String] = []
    /// Properties or entries that were not of the documented shapes.
    var malformed = 0

    init(properties: DBusPropertyMap) {
        name = properties["Name"]?.stringValue
        rssi = properties["RSSI"]?.int16Value.map(Int.init)
        txPower = properties["TxPower"]?.int16Value.map(Int.init)
        services = (properties["UUIDs"]?.stringArrayValue ?? []).map { $0.lowercased() }
        if let value = properties["ManufacturerData"] {
            if let entries = value.dictionaryEntries {
                for entry in entries {
                    guard let company = entry.key.uint16Value, let bytes = entry.value.bytesValue else {
                        malformed += 1
                        continue
                    }
                    manufacturerData[Self.hex(company)] = Data(bytes)
                }
            } else {
                malformed += 1
            }
        }
        if let value = properties["ServiceData"] {
            if let entries = value.dictionaryEntries {
                for entry in entries {
                    guard let text = entry.key.stringValue, let uuid = BluetoothUUID(text),
                        let bytes = entry.value.bytesValue
                    else {
                        malformed += 1
                        continue
                    }
                    serviceData[uuid.canonical] = Data(bytes)
                }
            } else {
                malformed += 1
            }
        }
    }

    /// `004c` for 0x004C.
    static func hex(_ company: UInt16) -> String {
        let digits = String(company, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// Whether both advertise the same (the RSSI aside).
    func advertisesTheSame(as other: AdvertisedData) -> Bool {
        name == other.name && txPower == other.txPower && manufacturerData == other.manufacturerData
            && serviceData == other.serviceData && services == other.services
    }

    /// Whether it advertises one of `uuids` (as a service or as service data); any when `uuids` is empty.
    func matches(_ uuids: [BluetoothUUID]) -> Bool {
        uuids.isEmpty || uuids.contains { services.contains($0.canonical) || serviceData[$0.canonical] != nil }
    }

    /// The short form of a UUID built on the Bluetooth base UUID (`fcd2`), else the UUID: how recorded readings name
    /// service data (`fcd2/temperature`).
    static func shortForm(_ canonical: String) -> String {
        let base = "-0000-1000-8000-00805f9b34fb"
        guard canonical.count == 36, canonical.hasPrefix("0000"), canonical.hasSuffix(base) else { return canonical }
        return String(canonical.dropFirst(4).prefix(4))
    }
}
