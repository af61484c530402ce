import ContextBusDBus
import ContextBusReactive
import ContextBusSupport

/// The discovery sessions this process holds on the adapter: one BlueZ discovery, shared by every scan.
struct DiscoveryState: Sendable {
    /// Scans running now; the first starts BlueZ's discovery and the last stops it.
    var scans = 0
}

/// `device.scan`: discovery shared between concurrent scans.
extension BlueZClient {
    /// Discovers for `duration`, then sends the devices heard during that time (with the last RSSI heard).
    ///
    /// The first running scan calls `Adapter1.StartDiscovery`, the last one to end `StopDiscovery`; scans in
    /// between share that one session (BlueZ gives each D-Bus client one discovery session, and a second
    /// `StartDiscovery` would answer `InProgress`). Filtering by UUID and RSSI is done here, per scan, so that
    /// scans with different filters can share the session.
    func scan(adapter: String, duration: Duration, callTimeout: Duration) -> Signal<[BlueZDevice], DeviceError> {
        Signal { observer, lifetime in
            let adapterPath: DBusObjectPath
            do throws(DeviceError) {
                guard let found = try self.availableTree().adapter(named: adapter) else {
                    throw .unavailable("BlueZ has no adapter \(adapter)")
                }
                adapterPath = found.path
            } catch {
                return observer.send(error: error)
            }
            let heard = Locked([DBusObjectPath: Int]())
            lifetime += self.observe { event in
                switch event {
                case .propertiesChanged(let change) where change.interface == BlueZ.deviceInterface:
                    if let rssi = change.changed["RSSI"]?.int16Value {
                        heard.withLock { $0[change.path] = Int(rssi) }
                    }
                case .interfacesAdded(let added):
                    if let rssi = added.interfaces[BlueZ.deviceInterface]?["RSSI"]?.int16Value {
                        heard.withLock { $0[added.objectPath] = Int(rssi) }
                    }
                case .vanished:
                    observer.send(error: .unavailable("\(BlueZ.serviceName) left the bus"))
                default:
                    break
                }
            }
            let isFirst = self.state.withLock { state -> Bool in
                state.discovery.scans += 1
                return state.discovery.scans == 1
            }
            lifetime.observeEnded { self.endScan(adapterPath: adapterPath) }
            if isFirst {
                lifetime += self.call(adapterPath, BlueZ.adapterInterface, "StartDiscovery", timeout: callTimeout)
                    .startWithFailed { error in
                        // Another client of ours may hold a session already; anything else ends the scan.
                        if error.bluezName != DeviceError.inProgress { observer.send(error: error) }
                    }
            }
            lifetime += self.scheduler.schedule(after: duration) {
                let rssis = heard.withLock { $0 }
                let tree = self.tree
                let devices = rssis.keys.sorted().compactMap { path -> BlueZDevice? in
                    guard let device = tree.device(at: path) else { return nil }
                    return device.withRSSI(rssis[path])
                }
                observer.send(value: devices)
                observer.sendCompleted()
            }
        }
    }

    private func endScan(adapterPath: DBusObjectPath) {
        let isLast = state.withLock { state -> Bool in
            guard state.discovery.scans > 0 else { return false }  // reset when BlueZ restarted
            state.discovery.scans -= 1
            return state.discovery.scans == 0
        }
        guard isLast else { return }
        var stop = DBusMessage.methodCall(
            destination: BlueZ.serviceName, path: adapterPath, interface: BlueZ.adapterInterface,
            member: "StopDiscovery")
        stop.flags.insert(.noReplyExpected)
        _ = try? connection.send(stop)
    }
}

extension BlueZDevice {
    /// The same device with the RSSI a scan heard.
    func withRSSI(_ rssi: Int?) -> BlueZDevice {
        BlueZDevice(
            path: path, adapterPath: adapterPath, address: address, name: name, rssi: rssi ?? self.rssi,
            isConnected: isConnected, isPaired: isPaired, servicesResolved: servicesResolved, uuids: uuids)
    }
}
