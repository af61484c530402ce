import ContextBusObjectGraph
import ContextBusWire
import Foundation

/// What a `record: true` chain saves: the device's state at the end of the chain and every value it read
/// or was notified, with when it arrived.
struct ChainRecording: Sendable, Hashable {
    /// One value read or notified.
    struct Reading: Sendable, Hashable {
        /// The UUID as the chain named it (`2a19`), which is what `Reading.characteristic` stores (`2a19/2901` for a
        /// descriptor; `fcd2/temperature` for a value decoded from an advertisement).
        var characteristic: String
        var value: Data
        var time: Date
        /// The value decoded, when its format is known (`Reading.number`, `Reading.unit`).
        var measurement: Quantity? = nil
        /// The chain that read it (`Reading.chain`); `nil` for a watch's or a discovery's values.
        var chain: String? = nil
    }

    /// The chain recorded (`c-17`), or what else made the readings (`watch 4`, `discovery 9`) for the log.
    var chain: String
    var address: BluetoothAddress
    var name: String?
    var connected: Bool
    var lastSeen: Date
    var readings: [Reading]
    /// The adapter the chain used, when it named one (for the device's state at the end).
    var adapter: String? = nil

    /// Adds the reading a progress event carries, if any: a value the device sent (read or notified), under the
    /// characteristic of its step; `steps` are the chain's steps.
    mutating func add(_ progress: ChainProgress, steps: [ChainStep], at time: Date) {
        guard let value = progress.value, let step = steps[progress.step].kind as? any CharacteristicStep else {
            return
        }
        readings.append(
            Reading(
                characteristic: step.readingName, value: value, time: time, measurement: progress.measurement,
                chain: chain))
    }

    /// Adds the recording to `context` (call on its queue): a `Device` with this address and the chain's state
    /// (`name` only when known), and one `Reading` per value, related to it. `Device` is unique by `address`, so
    /// saved with merge policy `objectTrump` the device is an upsert: the existing one takes the state, or a new
    /// one is made, in the same save as the readings (no fetch first). The caller saves.
    func insert(into context: ObjectContext) {
        // A store serving an older model has no `number`/`unit`: the readings are saved without them.
        let decodes = context.model.entity(named: "Reading")?.attribute(named: "number") != nil
        let device = context.insert(entity: "Device")
        device["address", as: String.self] = address.string
        if let name { device["name", as: String.self] = name }
        device["connected", as: Bool.self] = connected
        device["lastSeen", as: Date.self] = lastSeen
        for reading in readings {
            let object = context.insert(entity: "Reading")
            object["characteristic", as: String.self] = reading.characteristic
            object["value", as: Data.self] = reading.value
            object["time", as: Date.self] = reading.time
            if let chain = reading.chain { object["chain", as: String.self] = chain }
            if decodes, let measurement = reading.measurement {
                object["number", as: Double.self] = measurement.number
                if let unit = measurement.unit { object["unit", as: String.self] = unit }
            }
            object.setRelatedObject(device, forKey: "device")
        }
    }
}
