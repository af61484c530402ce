import ContextBus
import ContextBusClient
import Dispatch
import Foundation

/// Pattern 1, a worker context importing JSON in the background whose save is merged into main, and pattern 2,
/// signals delivered on a context's scheduler instead of `performAndWait`.
///
/// A worker parses an inventory (JSON, as a fleet tool would send it) on its own queue and finds or creates each
/// device by its unique address (`Device.find(address:in:)`: importing twice updates, never duplicates), adding its
/// readings. Its save goes into the stack's root in memory, and main merges it by itself: a `TypedLiveQuery` on main
/// shows the devices arrive, with a diff, without main fetching or waiting. Then the root writes to storesvc; the
/// `store.changed` event storesvc sends for that transaction arrives on the bus client's loop thread, and
/// `deliver(on: stack.main.scheduler)` brings it to main's queue, where main's objects may be touched: no
/// `performAndWait` anywhere.
struct ImportPattern {
    let stack: ContextStack
    let store: RemoteStore

    /// The inventory the worker imports.
    static let inventory = """
        {"devices": [
            {"address": "FE:ED:00:00:00:01", "name": "greenhouse",
             "readings": [{"characteristic": "2a6e", "number": 24.5, "unit": "°C", "value": "9209"},
                          {"characteristic": "2a19", "number": 91, "unit": "%", "value": "5b"}]},
            {"address": "FE:ED:00:00:00:02", "name": "cold store",
             "readings": [{"characteristic": "2a6e", "number": 3.25, "unit": "°C", "value": "4501"}]},
            {"address": "FE:ED:00:00:00:03", "name": "office",
             "readings": [{"characteristic": "2a6e", "number": 21.0, "unit": "°C", "value": "3408"},
                          {"characteristic": "2a19", "number": 55, "unit": "%", "value": "37"}]}
        ]}
        """

    /// Imports, waits for main to show the merge and for storesvc's event on main's queue; returns the devices' IDs.
    func run() throws -> [ObjectID] {
        let main = stack.main
        let stamp = Date()
        let updates = Locked<[(objects: [String], stamped: Int, isDiff: Bool)]>([])
        let updated = DispatchSemaphore(value: 0)
        let query = try TypedLiveQuery(
            try Device.fetchRequest(where: "address BEGINSWITH 'FE:ED'", sortedBy: [.address]), in: main)
        let watching = query.updates.startWithValues { update in  // on main's queue
            let objects = update.objects
            let stamped = objects.filter { $0.lastSeen == stamp }.count
            updates.withLock { $0.append((objects.map { $0.name ?? "?" }, stamped, update.diff != nil)) }
            updated.signal()
        }
        defer { watching.dispose() }
        guard updated.wait(timeout: .now() + 30) == .success else { throw DemoFailure(description: "no first update") }

        // 1. The import, on a worker's queue: nothing here waits for it.
        let worker = stack.newWorker(name: "importer")
        let imported = Locked<Result<(devices: Int, readings: Int), any Error>?>(nil)
        worker.perform {
            imported.withLock { $0 = Result { try Self.importInventory(into: worker, stamp: stamp) } }
        }
        let deadline = DispatchTime.now() + 30
        while updates.withLock({ $0.last?.stamped }) != 3 {
            guard updated.wait(timeout: deadline) == .success else {
                throw DemoFailure(description: "main did not show the import: \(imported.withLock { $0 }.debugText)")
            }
        }
        let counts = try imported.withLock { $0 }!.get()
        let shown = updates.withLock { $0.last! }
        say(
            "patterns: import: a worker imported \(counts.devices) devices and \(counts.readings) readings from JSON "
                + "in the background; main merged its save by itself (live query "
                + "\(shown.isDiff ? "diff" : "result"): \(shown.objects.joined(separator: ", ")))")

        // 2. storesvc's event for the root's write, delivered on main's queue.
        let delivered = Locked<(txn: Int64, readings: Int, names: [String], onMain: Bool)?>(nil)
        let arrived = DispatchSemaphore(value: 0)
        let time = JSONValue.string(stamp.rfc3339String)
        let events = store.client.events(ChangedEvent.self)
            .filter { change in change.inserted.contains { $0.values["time"] == time } }  // on the client's loop thread
            .deliver(on: main.scheduler)
            .startWithValues { change in  // on main's queue: main's objects may be touched here
                let readings = change.inserted.filter { $0.values["time"] == time }
                let ids = Set(readings.compactMap { $0.values["device"]?.stringValue.flatMap(ObjectID.init(string:)) })
                let names = main.objects(with: Array(ids), as: Device.self).compactMap(\.name)
                delivered.withLock { $0 = (change.txn, readings.count, names, main.isOnQueue) }
                arrived.signal()
            }
        defer { events.dispose() }
        try stack.saveRoot()
        guard arrived.wait(timeout: .now() + 30) == .success, let event = delivered.withLock({ $0 }) else {
            throw DemoFailure(description: "storesvc's store.changed for the import did not arrive")
        }
        say(
            "patterns: scheduler: storesvc's store.changed txn \(event.txn) arrived on the bus client's thread and "
                + "was delivered on main's queue (\(event.onMain ? "on main" : "NOT on main")): \(event.readings) "
                + "readings of " + event.names.sorted().joined(separator: ", "))
        return try main.performAndWait {
            try Self.addresses.map { address in
                guard let device = try Device.find(address: address, in: main) else {
                    throw DemoFailure(description: "\(address) is not in main")
                }
                return device.objectID
            }
        }
    }

    static var addresses: [String] { (1...3).map { "FE:ED:00:00:00:0\($0)" } }

    /// On the worker's queue: parses the inventory, finds or creates each device, adds its readings, saves.
    static func importInventory(into worker: ObjectContext, stamp: Date) throws -> (devices: Int, readings: Int) {
        let json = try JSONParser().parse(Array(inventory.utf8))
        var readings = 0
        let entries = json["devices"]?.arrayValue ?? []
        for entry in entries {
            guard let address = entry["address"]?.stringValue else { throw DemoFailure(description: "no address") }
            let device = try Device.find(address: address, in: worker) ?? worker.insert(Device.self)
            device.address = address
            device.name = entry["name"]?.stringValue
            device.lastSeen = stamp
            for item in entry["readings"]?.arrayValue ?? [] {
                let reading = worker.insert(Reading.self)
                reading.characteristic = item["characteristic"]?.stringValue ?? "?"
                reading.value = Data(hex: item["value"]?.stringValue ?? "")
                reading.number = item["number"]?.doubleValue
                reading.unit = item["unit"]?.stringValue
                reading.time = stamp
                reading.device = device
                readings += 1
            }
        }
        try worker.save()  // into the root, in memory; main merges it
        return (entries.count, readings)
    }
}

extension Data {
    /// The bytes of a string of hexadecimal digits (`"9209"` → 0x92 0x09).
    init(hex: String) {
        var bytes: [UInt8] = []
        var digits = hex.makeIterator()
        while let high = digits.next(), let low = digits.next(), let byte = UInt8(String([high, low]), radix: 16) {
            bytes.append(byte)
        }
        self.init(bytes)
    }
}

extension Optional {
    /// `nil`, or the value.
    var debugText: String { map { "\($0)" } ?? "nil" }
}
