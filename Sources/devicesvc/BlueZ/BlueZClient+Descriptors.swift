import ContextBusDBus
import ContextBusReactive
import ContextBusWire
import Foundation

/// The descriptor operations: `GattDescriptor1.ReadValue` and `WriteValue`, on the descriptor found by UUID below the
/// characteristic found by UUID (the first of each by object path).
extension BlueZClient {
    /// Looks a descriptor up below a characteristic of a device in the current tree.
    func descriptor(
        _ uuid: BluetoothUUID, of characteristicUUID: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String
    ) throws(DeviceError) -> GattDescriptor {
        let characteristic = try characteristic(characteristicUUID, of: address, onAdapter: adapter)
        guard let descriptor = tree.descriptors(of: characteristic.path).first(where: { $0.uuid == uuid.canonical })
        else {
            throw .unknownDescriptor(
                address: address.string, characteristic: characteristicUUID.string, uuid: uuid.string)
        }
        return descriptor
    }

    /// `GattDescriptor1.ReadValue({})`: the descriptor's value.
    func readDescriptor(
        _ uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError> {
        descriptorCall(
            uuid, of: characteristic, of: address, onAdapter: adapter, "ReadValue", [.propertyMap([:])], callTimeout
        )
        .attemptMap { (reply) throws(DeviceError) -> Data in
            guard reply.bodySignature == "ay", let bytes = reply.body.first?.bytesValue else {
                throw .bluez(
                    DBusError(
                        name: DBusError.invalidArgs,
                        message: "ReadValue answered \"\(reply.bodySignature)\", expected \"ay\""))
            }
            return Data(bytes)
        }
    }

    /// `GattDescriptor1.WriteValue(value, {})`.
    func writeDescriptor(
        _ value: Data, to uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Void, DeviceError> {
        descriptorCall(
            uuid, of: characteristic, of: address, onAdapter: adapter, "WriteValue",
            [.bytes(Array(value)), .propertyMap([:])], callTimeout
        ).map { _ in () }
    }

    private func descriptorCall(
        _ uuid: BluetoothUUID, of characteristic: BluetoothUUID, of address: BluetoothAddress,
        onAdapter adapter: String,
        _ member: String, _ body: [DBusValue], _ callTimeout: Duration
    ) -> Signal<DBusMessage, DeviceError> {
        Signal { observer, lifetime in
            do throws(DeviceError) {
                let descriptor = try self.descriptor(uuid, of: characteristic, of: address, onAdapter: adapter)
                lifetime += self.call(descriptor.path, BlueZ.descriptorInterface, member, body, timeout: callTimeout)
                    .start(observer)
            } catch {
                observer.send(error: error)
            }
        }
    }
}
