import ContextBusReactive
import ContextBusWire
import Foundation

/// What the chain runner needs from Bluetooth: each operation on one device as a cold `Signal`.
///
/// The requirements are `BlueZClient`'s own operations (`BlueZClient+Operations`), which the service hands the runner
/// as they are. The protocol exists for `ChainRunnerTests` alone: they drive the runner with a scripted backend in
/// virtual time (a `TestScheduler`), which the simulated BlueZ cannot do. Every operation may fail with a
/// `DeviceError`; disposing a started operation stops it.
protocol DeviceBackend: Sendable {
    /// The object tree, when BlueZ is available.
    ///
    /// - Throws: `DeviceError.unavailable` when it is not on the bus (or its tree is still loading).
    func availableTree() throws(DeviceError) -> BlueZObjectTree
    /// Connects: sends `.linkUp` once the link is established (the adapter is free for another connection set-up
    /// from then on), then completes once the device's services are resolved, failing when they are not within
    /// `resolveTimeout`.
    func connect(
        _ address: BluetoothAddress, onAdapter adapter: String, resolveTimeout: Duration, callTimeout: Duration
    ) -> Signal<ConnectStage, DeviceError>
    /// Reads a characteristic.
    func read(
        _ uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError>
    /// Writes a characteristic, with or without response.
    func write(
        _ value: Data, to uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String,
        withResponse: Bool, callTimeout: Duration
    ) -> Signal<Void, DeviceError>
    /// Enables notifications and sends each notified value until disposed (which disables them).
    func notifications(
        _ uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError>
    /// Reads a descriptor of a characteristic.
    func readDescriptor(
        _ uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError>
    /// Writes a descriptor of a characteristic.
    func writeDescriptor(
        _ value: Data, to uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Void, DeviceError>
    /// Disconnects.
    func disconnect(
        _ address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Void, DeviceError>
    /// Fails when the device's link drops (or Bluetooth goes away); never sends anything else.
    func linkLoss(_ address: BluetoothAddress, onAdapter adapter: String) -> Signal<Never, DeviceError>
}

/// The real backend: BlueZ on the system bus.
extension BlueZClient: DeviceBackend {}
