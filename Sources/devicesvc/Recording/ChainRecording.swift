import BusProtocol
import Foundation
import Shared

/// What a `record: true` chain saves: the device's state at the end of the chain and every value it read
/// or was notified, with when it arrived.
struct ChainRecording: Sendable, Hashable {
    /// One value read or notified.
    struct Reading: Sendable, Hashable {
        /// The UUID as the chain named it (`2a19`), which is what `Reading.characteristic` stores.
        var characteristic: String
        var value: Data
        var time: Date
    }

    var chain: String
    var address: BluetoothAddress
    var name: String?
    var connected: Bool
    var lastSeen: Date
    var readings: [Reading]

    /// Adds the reading a progress event carries, if any; `steps` are the chain's steps.
    mutating func add(_ progress: ChainProgress, steps: [ChainStep], at time: Date) {
        switch progress {
        case .notification(let step, let value):
            guard let uuid = steps[step].characteristic else { return }
            readings.append(Reading(characteristic: uuid.string, value: value, time: time))
        case .finished(let result):
            guard result.operation == .read, let value = result.value, let uuid = steps[result.step].characteristic
            else { return }
            readings.append(Reading(characteristic: uuid.string, value: value, time: time))
        }
    }

    /// The `store.save` for this recording: the device updated (when its object is known) or inserted with ref
    /// `device`, and one `Reading` per value pointing at it.
    func saveParams(existingDevice: ObjectID?) -> SaveParams {
        var deviceValues: [String: JSONValue] = [
            "address": .string(address.string), "connected": .bool(connected),
            "lastSeen": .string(lastSeen.rfc3339String),
        ]
        if let name { deviceValues["name"] = .string(name) }
        var save = SaveParams(author: "devicesvc")
        let deviceReference: JSONValue
        if let existingDevice {
            // No version: the service is the only writer of its devices' state, last write wins.
            save.updates.append(.init(id: existingDevice, version: nil, values: deviceValues))
            deviceReference = .string(existingDevice.description)
        } else {
            save.inserts.append(.init(entity: "Device", ref: "device", values: deviceValues))
            deviceReference = .string("device")
        }
        for reading in readings {
            save.inserts.append(
                .init(
                    entity: "Reading", ref: nil,
                    values: [
                        "characteristic": .string(reading.characteristic),
                        "value": .string(reading.value.base64EncodedString()),
                        "time": .string(reading.time.rfc3339String), "chain": .string(chain),
                        "device": deviceReference,
                    ]))
        }
        return save
    }
}
