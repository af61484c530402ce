import ContextBusServer
import ContextBusWire

/// Where a watch's events go: its client's connection (`device.value`, `device.link`), the store (`record: true`,
/// `--watch`), or both.
protocol WatchSink: Sendable {
    /// A notification BlueZ delivered on the watch's link.
    func value(_ event: DeviceValueEvent)
    /// The watch's link changed.
    func link(_ event: DeviceLinkEvent)
}

/// A client's watch: its events on the client's connection. A client that does not read them is dropped with
/// `bus.overflow` like any subscriber (the connection's bounded outbound queue), which ends its watches.
struct ConnectionWatchSink: WatchSink {
    let connection: BusConnection

    func value(_ event: DeviceValueEvent) { connection.send(event) }
    func link(_ event: DeviceLinkEvent) { connection.send(event) }
}

/// Several sinks at once (a client's watch with `record: true`).
struct WatchSinks: WatchSink {
    let sinks: [any WatchSink]

    func value(_ event: DeviceValueEvent) { for sink in sinks { sink.value(event) } }
    func link(_ event: DeviceLinkEvent) { for sink in sinks { sink.link(event) } }
}
