import ContextBusDBus

/// Why one Bluetooth operation (connect, read, write, notify, disconnect) failed.
///
/// BlueZ's own errors keep their D-Bus name and message (`org.bluez.Error.Failed`,
/// `"le-connection-abort-by-local"`), because that is what people search for when a device misbehaves.
enum DeviceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// BlueZ answered with an error.
    case bluez(DBusError)
    /// The device's `Connected` property turned false while the operation ran.
    case linkLost(address: String)
    /// `Device1.Connect` succeeded but `ServicesResolved` did not turn true in time.
    case servicesNotResolved(address: String, after: Duration)
    /// BlueZ did not answer a call in time (our own D-Bus timeout).
    case noReply(member: String, after: Duration)
    /// BlueZ is not on the bus (nobody owns `org.bluez`), or the bus connection is gone.
    case unavailable(String)
    /// BlueZ does not know the device (it was never discovered, or was removed).
    case unknownDevice(address: String)
    /// The device has no characteristic with that UUID (are its services resolved?).
    case unknownCharacteristic(address: String, uuid: String)
    /// The characteristic has no descriptor with that UUID.
    case unknownDescriptor(address: String, characteristic: String, uuid: String)

    /// The D-Bus error name, when BlueZ gave one.
    var bluezName: String? {
        if case .bluez(let error) = self { return error.name }
        return nil
    }

    /// Whether trying again soon may well succeed: BlueZ is busy with the device (`InProgress`), the controller
    /// aborted the connection attempt (`le-connection-abort-by-local`, common with crowded radios), or the
    /// services did not resolve (a known field failure of some peripherals).
    var isTransient: Bool {
        switch self {
        case .bluez(let error):
            if error.name == DeviceError.inProgress { return true }
            return error.name == DeviceError.failed && error.message.contains("le-connection-abort-by-local")
        case .servicesNotResolved:
            return true
        case .linkLost, .noReply, .unavailable, .unknownDevice, .unknownCharacteristic, .unknownDescriptor:
            return false
        }
    }

    var description: String {
        switch self {
        case .bluez(let error): return error.description
        case .linkLost(let address): return "\(address): link lost (Connected turned false)"
        case .servicesNotResolved(let address, let after):
            return "\(address): services were not resolved within \(after.milliseconds) ms of connecting"
        case .noReply(let member, let after): return "BlueZ did not answer \(member) within \(after.milliseconds) ms"
        case .unavailable(let reason): return "BlueZ is unavailable: \(reason)"
        case .unknownDevice(let address): return "BlueZ does not know the device \(address) (scan for it first)"
        case .unknownCharacteristic(let address, let uuid): return "\(address) has no characteristic \(uuid)"
        case .unknownDescriptor(let address, let characteristic, let uuid):
            return "\(address): characteristic \(characteristic) has no descriptor \(uuid)"
        }
    }

    static let inProgress = "org.bluez.Error.InProgress"
    static let failed = "org.bluez.Error.Failed"

    /// The device error for whatever a D-Bus call to BlueZ threw.
    init(callError error: any Error) {
        switch error {
        case let error as DBusError:
            switch error.name {
            case DBusError.serviceUnknown, DBusError.nameHasNoOwner:
                self = .unavailable("nobody owns \(BlueZ.serviceName) on the bus")
            default:
                self = .bluez(error)
            }
        case let error as DBusConnectionError:
            if case .timedOut(let member, let after) = error {
                self = .noReply(member: member, after: after)
            } else {
                self = .unavailable(error.description)
            }
        case let error as DeviceError:
            self = error
        default:
            self = .unavailable("\(error)")
        }
    }
}

extension Duration {
    /// Whole milliseconds (truncated), for messages.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
