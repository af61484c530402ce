import ContextBusReactive
import ContextBusWire
import Foundation

/// What the chain runner needs from Bluetooth: each operation of one device as a cold `Signal`.
///
/// `BlueZBackend` is the real one; tests substitute a scripted backend to drive the runner with a
/// `TestScheduler`. Every operation may fail with a `DeviceError`; disposing a started operation stops it.
protocol DeviceBackend: Sendable {
    /// Fails when Bluetooth cannot be used at all (BlueZ not on the bus).
    func checkAvailable() throws(DeviceError)
    /// Connects: sends `.linkUp` once the link is established (the adapter is free for another connection set-up
    /// from then on), then completes once the device's services are resolved.
    func connect(_ address: BluetoothAddress, timeout: Duration) -> Signal<ConnectStage, DeviceError>
    /// Reads a characteristic.
    func read(
        _ characteristic: BluetoothUUID, of address: BluetoothAddress, timeout: Duration
    )
        -> Signal<Data, DeviceError>
    /// Writes a characteristic, with or without response.
    func write(
        _ value: Data, to characteristic: BluetoothUUID, of address: BluetoothAddress, withResponse: Bool,
        timeout: Duration
    ) -> Signal<Void, DeviceError>
    /// Enables notifications and sends each notified value until disposed (which disables them).
    func notifications(
        of characteristic: BluetoothUUID, of address: BluetoothAddress, timeout: Duration
    )
        -> Signal<Data, DeviceError>
    /// Disconnects.
    func disconnect(_ address: BluetoothAddress, timeout: Duration) -> Signal<Void, DeviceError>
    /// Fails when the device's link drops (or Bluetooth goes away); never sends anything else.
    func linkLoss(of address: BluetoothAddress) -> Signal<Never, DeviceError>
}

/// The chain runner's view of BlueZ on one adapter.
struct BlueZBackend: DeviceBackend {
    let client: BlueZClient
    /// The adapter chains use (`--adapter`).
    let adapter: String
    /// How long a connection may take to resolve its services before it counts as failed (and is retried).
    let resolveTimeout: Duration

    func checkAvailable() throws(DeviceError) {
        _ = try client.availableTree()
    }

    func connect(_ address: BluetoothAddress, timeout: Duration) -> Signal<ConnectStage, DeviceError> {
        client.connect(address, onAdapter: adapter, resolveTimeout: min(resolveTimeout, timeout), callTimeout: timeout)
    }

    func read(
        _ characteristic: BluetoothUUID, of address: BluetoothAddress, timeout: Duration
    )
        -> Signal<Data, DeviceError>
    {
        client.read(characteristic, of: address, onAdapter: adapter, callTimeout: timeout)
    }

    func write(
        _ value: Data, to characteristic: BluetoothUUID, of address: BluetoothAddress, withResponse: Bool,
        timeout: Duration
    ) -> Signal<Void, DeviceError> {
        client.write(
            value, to: characteristic, of: address, onAdapter: adapter, withResponse: withResponse,
            callTimeout: timeout)
    }

    func notifications(
        of characteristic: BluetoothUUID, of address: BluetoothAddress, timeout: Duration
    )
        -> Signal<Data, DeviceError>
    {
        client.notifications(characteristic, of: address, onAdapter: adapter, callTimeout: timeout)
    }

    func disconnect(_ address: BluetoothAddress, timeout: Duration) -> Signal<Void, DeviceError> {
        client.disconnect(address, onAdapter: adapter, callTimeout: timeout)
    }

    func linkLoss(of address: BluetoothAddress) -> Signal<Never, DeviceError> {
        client.linkLoss(address, onAdapter: adapter)
    }
}
