import ContextBusDBus
import ContextBusReactive
import ContextBusSupport
import ContextBusWire
import Foundation

/// The GATT and connection operations, each a cold `Signal` that makes its BlueZ calls when started.
///
/// Disposing a started operation stops waiting for its reply (a later reply is dropped); `notifications`
/// also ends its notify session. Every call carries our own timeout, because D-Bus itself has none.
extension BlueZClient {
    /// Calls a BlueZ method and sends its reply.
    func call(
        _ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = [], timeout: Duration
    ) -> Signal<DBusMessage, DeviceError> {
        Signal { observer, lifetime in
            let message = DBusMessage.methodCall(
                destination: BlueZ.serviceName, path: path, interface: interface, member: member, body: body)
            let serial = self.connection.call(message, timeout: timeout) { result in
                switch result {
                case .success(let reply):
                    observer.send(value: reply)
                    observer.sendCompleted()
                case .failure(let error):
                    observer.send(error: DeviceError(callError: error))
                }
            }
            lifetime.observeEnded { [connection = self.connection] in connection.cancelCall(serial: serial) }
        }
    }

    /// Looks a device up in the current tree.
    func device(_ address: BluetoothAddress, onAdapter adapter: String) throws(DeviceError) -> BlueZDevice {
        guard let device = try availableTree().device(address, onAdapter: adapter) else {
            throw .unknownDevice(address: address.string)
        }
        return device
    }

    /// Looks a device's object path up in the current tree (no `BlueZDevice` built).
    func devicePath(_ address: BluetoothAddress, onAdapter adapter: String) throws(DeviceError) -> DBusObjectPath {
        guard let path = try availableTree().devicePath(address, onAdapter: adapter) else {
            throw .unknownDevice(address: address.string)
        }
        return path
    }

    /// Looks a characteristic up below a device in the current tree.
    func characteristic(
        _ uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String
    ) throws(DeviceError) -> GattCharacteristic {
        let tree = try availableTree()
        guard let devicePath = tree.devicePath(address, onAdapter: adapter) else {
            throw .unknownDevice(address: address.string)
        }
        guard let characteristic = tree.characteristic(uuid, onDevice: devicePath) else {
            throw .unknownCharacteristic(address: address.string, uuid: uuid.string)
        }
        return characteristic
    }

    // MARK: - Connect and disconnect

    /// `Device1.Connect`, then waits for `ServicesResolved`; sends `.linkUp` when the link is established
    /// (`Connected` true, or the `Connect` reply if that comes first) and completes once the device is connected
    /// with its GATT database known.
    ///
    /// A connection whose services do not resolve within `resolveTimeout` is disconnected (waiting for BlueZ to
    /// answer the `Disconnect`) and the operation fails with `.servicesNotResolved`, a transient failure. The
    /// link dropping (`Connected` false) after the `Connect` reply fails with `.linkLost`.
    func connect(
        _ address: BluetoothAddress, onAdapter adapter: String, resolveTimeout: Duration, callTimeout: Duration
    ) -> Signal<ConnectStage, DeviceError> {
        Signal { observer, lifetime in
            let devicePath: DBusObjectPath
            do throws(DeviceError) {
                devicePath = try self.devicePath(address, onAdapter: adapter)
            } catch {
                return observer.send(error: error)
            }
            let progress = Locked(ConnectProgress())
            let linkUp: @Sendable () -> Void = {
                let first = progress.withLock { state -> Bool in
                    defer { state.isLinkUp = true }
                    return !state.isLinkUp
                }
                if first { observer.send(value: .linkUp) }
            }
            let finish: @Sendable () -> Void = {
                linkUp()
                observer.sendCompleted()
            }
            lifetime += self.observe { event in
                switch event {
                case .propertiesChanged(let change)
                where change.path == devicePath && change.interface == BlueZ.deviceInterface:
                    if change.changed["Connected"]?.boolValue == true { linkUp() }
                    if change.changed["ServicesResolved"]?.boolValue == true {
                        let done = progress.withLock { state -> Bool in
                            // Too late once we gave up: our Disconnect is on its way.
                            guard !state.isGivingUp else { return false }
                            state.isResolved = true
                            return state.hasReply
                        }
                        if done { finish() }
                    }
                    if change.changed["Connected"]?.boolValue == false,
                        progress.withLock({ $0.hasReply && !$0.isGivingUp })
                    {
                        observer.send(error: .linkLost(address: address.string))
                    }
                case .interfacesRemoved(let removed)
                where removed.objectPath == devicePath && removed.interfaces.contains(BlueZ.deviceInterface):
                    observer.send(error: .linkLost(address: address.string))
                case .vanished:
                    observer.send(error: .unavailable("\(BlueZ.serviceName) left the bus"))
                default:
                    break
                }
            }
            let connecting = self.call(devicePath, BlueZ.deviceInterface, "Connect", timeout: callTimeout)
            lifetime += connecting.start { event in
                switch event {
                case .value:
                    linkUp()
                    // The reply comes after the signals sent before it: the tree is current for this device.
                    let resolvedNow = self.tree.device(at: devicePath).map { $0.isConnected && $0.servicesResolved }
                    let done = progress.withLock { state -> Bool in
                        state.hasReply = true
                        return state.isResolved || resolvedNow == true
                    }
                    if done { return finish() }
                    lifetime += self.scheduler.schedule(after: resolveTimeout) {
                        self.giveUpResolving(
                            devicePath, of: address, progress: progress, after: resolveTimeout, observer: observer)
                    }
                case .failed(let error):
                    observer.send(error: error)
                case .completed, .interrupted:
                    break
                }
            }
        }
    }

    /// Disconnects a connection whose services never resolved, then fails with `.servicesNotResolved`.
    private func giveUpResolving(
        _ devicePath: DBusObjectPath, of address: BluetoothAddress, progress: Locked<ConnectProgress>,
        after timeout: Duration,
        observer: Observer<ConnectStage, DeviceError>
    ) {
        let proceed = progress.withLock { state -> Bool in
            guard !state.isResolved else { return false }
            state.isGivingUp = true
            return true
        }
        guard proceed else { return }
        let failure = DeviceError.servicesNotResolved(address: address.string, after: timeout)
        call(devicePath, BlueZ.deviceInterface, "Disconnect", timeout: .seconds(10)).start { event in
            if event.isTerminating { observer.send(error: failure) }
        }
    }

    /// `Device1.Disconnect`. A device BlueZ does not know is not connected: that completes at once.
    func disconnect(
        _ address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Void, DeviceError> {
        Signal { observer, lifetime in
            let devicePath: DBusObjectPath
            do throws(DeviceError) {
                devicePath = try self.devicePath(address, onAdapter: adapter)
            } catch .unknownDevice {
                return observer.sendCompleted()
            } catch {
                return observer.send(error: error)
            }
            lifetime += self.call(devicePath, BlueZ.deviceInterface, "Disconnect", timeout: callTimeout)
                .start { event in
                    switch event {
                    case .value: observer.send(value: ())
                    case .failed(let error): observer.send(error: error)
                    case .completed: observer.sendCompleted()
                    case .interrupted: break
                    }
                }
        }
    }

    // MARK: - GATT

    /// `GattCharacteristic1.ReadValue({})`: the characteristic's current value.
    ///
    /// The `PropertiesChanged(Value)` BlueZ signals for the read is kept from the observers (`ReadEchoFilter`): a
    /// watch's `device.value` events are the notifications only.
    func read(
        _ uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError> {
        Signal { observer, lifetime in
            let characteristic: GattCharacteristic
            do throws(DeviceError) {
                characteristic = try self.characteristic(uuid, of: address, onAdapter: adapter)
            } catch {
                return observer.send(error: error)
            }
            let message = DBusMessage.methodCall(
                destination: BlueZ.serviceName, path: characteristic.path, interface: BlueZ.characteristicInterface,
                member: "ReadValue", body: [.propertyMap([:])])
            let token = self.readStarting(at: characteristic.path)
            // The completion runs exactly once (reply, error, timeout or cancellation), so the read always ends.
            let serial = self.connection.call(message, timeout: callTimeout) { result in
                switch result {
                case .success(let reply):
                    guard reply.bodySignature == "ay", let bytes = reply.body.first?.bytesValue else {
                        self.readEnded(token, answer: nil)
                        return observer.send(
                            error: .bluez(
                                DBusError(
                                    name: DBusError.invalidArgs,
                                    message: "ReadValue answered \"\(reply.bodySignature)\", expected \"ay\"")))
                    }
                    self.readEnded(token, answer: bytes)
                    observer.send(value: Data(bytes))
                    observer.sendCompleted()
                case .failure(let error):
                    self.readEnded(token, answer: nil)
                    observer.send(error: DeviceError(callError: error))
                }
            }
            lifetime.observeEnded { [connection = self.connection] in connection.cancelCall(serial: serial) }
        }
    }

    /// `GattCharacteristic1.WriteValue(value, {"type": "request" | "command"})`.
    func write(
        _ value: Data, to uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String,
        withResponse: Bool, callTimeout: Duration
    ) -> Signal<Void, DeviceError> {
        let options = DBusValue.propertyMap(["type": .string(withResponse ? "request" : "command")])
        return gattCall(
            uuid, of: address, onAdapter: adapter, "WriteValue", [.bytes(Array(value)), options],
            callTimeout: callTimeout
        ).map { _ in () }
    }

    /// `StartNotify`, then every new `Value` of the characteristic, until disposed; disposal sends `StopNotify`
    /// (its answer is not awaited, but it is on the wire before any later call of this connection). The session is
    /// shared: while a watch holds it, no second `StartNotify` goes out, and the watch's outlives this one.
    func notifications(
        _ uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, callTimeout: Duration
    ) -> Signal<Data, DeviceError> {
        Signal { observer, lifetime in
            let characteristic: GattCharacteristic
            do throws(DeviceError) {
                characteristic = try self.characteristic(uuid, of: address, onAdapter: adapter)
            } catch {
                return observer.send(error: error)
            }
            // Watch before asking, so that a value sent just after StartNotify is not missed.
            lifetime += self.observe { event in
                guard case .propertiesChanged(let change) = event, change.path == characteristic.path,
                    change.interface == BlueZ.characteristicInterface,
                    let bytes = change.changed["Value"]?.bytesValue
                else { return }
                observer.send(value: Data(bytes))
            }
            // The session is shared with a watch on the same characteristic (BlueZClient+NotifySessions).
            lifetime += self.holdNotifySession(at: characteristic.path, callTimeout: callTimeout) { error in
                if let error { observer.send(error: error) }
            }
        }
    }

    /// Fails with `.linkLost` when the device's `Connected` turns false (or the device disappears), and with
    /// `.unavailable` when BlueZ leaves the bus; sends nothing otherwise.
    func linkLoss(_ address: BluetoothAddress, onAdapter adapter: String) -> Signal<Never, DeviceError> {
        Signal { observer, lifetime in
            guard let devicePath = self.tree.devicePath(address, onAdapter: adapter) else { return }
            lifetime += self.observe { event in
                switch event {
                case .propertiesChanged(let change)
                where change.path == devicePath && change.interface == BlueZ.deviceInterface
                    && change.changed["Connected"]?.boolValue == false:
                    observer.send(error: .linkLost(address: address.string))
                case .interfacesRemoved(let removed)
                where removed.objectPath == devicePath && removed.interfaces.contains(BlueZ.deviceInterface):
                    observer.send(error: .linkLost(address: address.string))
                case .vanished:
                    observer.send(error: .unavailable("\(BlueZ.serviceName) left the bus"))
                default:
                    break
                }
            }
        }
    }

    private func gattCall(
        _ uuid: BluetoothUUID, of address: BluetoothAddress, onAdapter adapter: String, _ member: String,
        _ body: [DBusValue], callTimeout: Duration
    ) -> Signal<DBusMessage, DeviceError> {
        Signal { observer, lifetime in
            do throws(DeviceError) {
                let characteristic = try self.characteristic(uuid, of: address, onAdapter: adapter)
                lifetime += self.call(
                    characteristic.path, BlueZ.characteristicInterface, member, body, timeout: callTimeout
                ).start(observer)
            } catch {
                observer.send(error: error)
            }
        }
    }
}

/// How far one `connect` has come.
struct ConnectProgress: Sendable {
    var hasReply = false
    /// Set once `.linkUp` was sent.
    var isLinkUp = false
    var isResolved = false
    /// Set when the services-resolved timeout fired: the `Connected` false that our own `Disconnect` causes is
    /// not a link loss.
    var isGivingUp = false
}
