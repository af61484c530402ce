import ContextBusDBus
import ContextBusWire

/// BlueZ's object tree as this process last saw it: every object below `/` with its interfaces and properties.
///
/// It is a plain value. `BlueZClient` keeps one current by replacing it with `GetManagedObjects`' answer
/// when BlueZ appears, then applying `InterfacesAdded`, `InterfacesRemoved` and `PropertiesChanged` in the
/// order the bus delivered them. The typed views (`adapters`, `devices`, `characteristic(_:onDevice:)`) are
/// computed from the raw maps on demand, so that a property BlueZ adds later is never lost.
///
/// ```
/// /org/bluez/hci0                                   Adapter1
/// /org/bluez/hci0/dev_AA_BB_CC_DD_EE_01             Device1
/// /org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service000c GattService1
///                                      …/char000d   GattCharacteristic1   UUID 00002a19-…
///                                      …/desc000f   GattDescriptor1
/// ```
struct BlueZObjectTree: Sendable, Hashable {
    /// Every object's interfaces and properties, by path.
    private(set) var objects: DBusManagedObjects = [:]

    init(objects: DBusManagedObjects = [:]) {
        self.objects = objects
    }

    // MARK: - Keeping it current

    /// Adds the interfaces (and their properties) of an `InterfacesAdded` signal.
    mutating func apply(_ added: DBusInterfacesAdded) {
        var interfaces = objects[added.objectPath] ?? [:]
        for (name, properties) in added.interfaces { interfaces[name] = properties }
        objects[added.objectPath] = interfaces
    }

    /// Removes the interfaces of an `InterfacesRemoved` signal; an object left without interfaces is gone.
    mutating func apply(_ removed: DBusInterfacesRemoved) {
        guard var interfaces = objects[removed.objectPath] else { return }
        for name in removed.interfaces { interfaces[name] = nil }
        objects[removed.objectPath] = interfaces.isEmpty ? nil : interfaces
    }

    /// Merges a `PropertiesChanged` signal: changed values replace the old ones, invalidated ones are dropped.
    ///
    /// A signal for an object or interface the tree does not hold is ignored: BlueZ announces objects with
    /// `InterfacesAdded` before it changes their properties.
    mutating func apply(_ change: DBusPropertiesChanged) {
        guard var properties = objects[change.path]?[change.interface] else { return }
        for (name, value) in change.changed { properties[name] = value }
        for name in change.invalidated { properties[name] = nil }
        objects[change.path]?[change.interface] = properties
    }

    // MARK: - Typed views

    /// The properties of one interface of one object.
    func properties(of interface: String, at path: DBusObjectPath) -> DBusPropertyMap? {
        objects[path]?[interface]
    }

    /// Every adapter, by path order.
    var adapters: [BlueZAdapter] {
        objects.keys.sorted().compactMap { path in
            properties(of: BlueZ.adapterInterface, at: path).flatMap { BlueZAdapter(path: path, properties: $0) }
        }
    }

    /// The adapter named `name` (`hci0`).
    func adapter(named name: String) -> BlueZAdapter? {
        adapters.first { $0.name == name }
    }

    /// Every device, by path order; only those of the adapter named `adapter` when it is given.
    func devices(onAdapter adapter: String? = nil) -> [BlueZDevice] {
        objects.keys.sorted().compactMap { path -> BlueZDevice? in
            guard let properties = properties(of: BlueZ.deviceInterface, at: path),
                let device = BlueZDevice(path: path, properties: properties)
            else { return nil }
            if let adapter, device.adapterPath.lastElement != adapter { return nil }
            return device
        }
    }

    /// The device at `path`.
    func device(at path: DBusObjectPath) -> BlueZDevice? {
        properties(of: BlueZ.deviceInterface, at: path).flatMap { BlueZDevice(path: path, properties: $0) }
    }

    /// The device with `address` on the adapter named `adapter`.
    func device(_ address: BluetoothAddress, onAdapter adapter: String) -> BlueZDevice? {
        devicePath(address, onAdapter: adapter).flatMap(device(at:))
    }

    /// The path of the device with `address` on the adapter named `adapter`: what most lookups need (every step's),
    /// found without building a `BlueZDevice`.
    func devicePath(_ address: BluetoothAddress, onAdapter adapter: String) -> DBusObjectPath? {
        // BlueZ names device objects after the address; look there first, then search (a device object
        // whose path does not follow the convention is still found by its Address property).
        let element = String(
            decoding: address.string.utf8.map { $0 == UInt8(ascii: ":") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
        if let path = try? DBusObjectPath("/org/bluez/\(adapter)/dev_" + element),
            properties(of: BlueZ.deviceInterface, at: path)?["Address"]?.stringValue != nil
        {
            return path
        }
        return devices(onAdapter: adapter).first { $0.address == address.string }?.path
    }

    /// The characteristics below the device at `devicePath`, by path order.
    func characteristics(onDevice devicePath: DBusObjectPath) -> [GattCharacteristic] {
        unorderedCharacteristics(onDevice: devicePath).sorted { $0.path < $1.path }
    }

    /// The first characteristic (by path order) with `uuid`, short or full, below the device at `devicePath`.
    ///
    /// Every GATT step looks its characteristic up here, so it neither sorts the tree nor builds a value for
    /// every characteristic: it compares UUIDs in the raw properties and builds the one with the smallest path.
    func characteristic(_ uuid: BluetoothUUID, onDevice devicePath: DBusObjectPath) -> GattCharacteristic? {
        let canonical = uuid.canonical
        var best: (path: DBusObjectPath, properties: DBusPropertyMap)?
        // Cheapest test first: most objects are other devices'.
        for (path, interfaces) in objects where path.isInNamespace(devicePath) && path != devicePath {
            guard let properties = interfaces[BlueZ.characteristicInterface],
                let text = properties["UUID"]?.stringValue, text.inCase(upper: false) == canonical,
                best.map({ path < $0.path }) ?? true
            else { continue }
            best = (path, properties)
        }
        return best.flatMap { GattCharacteristic(path: $0.path, properties: $0.properties) }
    }

    private func unorderedCharacteristics(onDevice devicePath: DBusObjectPath) -> [GattCharacteristic] {
        objects.compactMap { path, interfaces -> GattCharacteristic? in
            guard let properties = interfaces[BlueZ.characteristicInterface], path != devicePath,
                path.isInNamespace(devicePath)
            else { return nil }
            return GattCharacteristic(path: path, properties: properties)
        }
    }

    /// The ATT MTU of the device's link: BlueZ's `MTU` on its characteristics (present while connected).
    func mtu(onDevice devicePath: DBusObjectPath) -> Int? {
        for (path, interfaces) in objects where path.isInNamespace(devicePath) && path != devicePath {
            if let mtu = interfaces[BlueZ.characteristicInterface]?["MTU"]?.uint16Value { return Int(mtu) }
        }
        return nil
    }

    /// The characteristic at `path`.
    func characteristic(at path: DBusObjectPath) -> GattCharacteristic? {
        properties(of: BlueZ.characteristicInterface, at: path).flatMap {
            GattCharacteristic(path: path, properties: $0)
        }
    }

    /// The GATT services below the device at `devicePath`.
    func services(onDevice devicePath: DBusObjectPath) -> [GattService] {
        objects.keys.sorted().compactMap { path -> GattService? in
            guard path.isInNamespace(devicePath), let properties = properties(of: BlueZ.serviceInterface, at: path),
                let uuid = properties["UUID"]?.stringValue
            else { return nil }
            return GattService(
                path: path, devicePath: properties["Device"]?.objectPathValue, uuid: uuid.lowercased(),
                isPrimary: properties["Primary"]?.boolValue ?? true)
        }
    }

    /// The GATT descriptors below the characteristic at `characteristicPath`.
    func descriptors(of characteristicPath: DBusObjectPath) -> [GattDescriptor] {
        objects.keys.sorted().compactMap { path -> GattDescriptor? in
            guard path.isInNamespace(characteristicPath),
                let properties = properties(of: BlueZ.descriptorInterface, at: path),
                let uuid = properties["UUID"]?.stringValue
            else { return nil }
            return GattDescriptor(
                path: path, characteristicPath: properties["Characteristic"]?.objectPathValue,
                uuid: uuid.lowercased())
        }
    }

    /// The device that the object at `path` belongs to (the object itself when it is a device).
    func devicePath(containing path: DBusObjectPath) -> DBusObjectPath? {
        var candidate = path
        while candidate != .root {
            if objects[candidate]?[BlueZ.deviceInterface] != nil { return candidate }
            candidate = candidate.parent
        }
        return nil
    }
}
