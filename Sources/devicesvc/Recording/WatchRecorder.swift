import ContextBusReactive
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Foundation

/// Saves what watches (`record: true`, `--watch`) and discoveries (`record: true`) receive, in batches: every value
/// is a `Reading` (with `number`/`unit` when it decoded), and the device's `connected` and `lastSeen` follow.
///
/// A watch streaming 100 values a second would cost the store 100 transactions a second if each were saved alone;
/// instead a device's readings are collected for `interval` (or until `batchLimit` of them) and saved as one
/// recording through the same `StoreRecorder` as chains (one `store.save`, in order). The store being unreachable
/// loses that batch (logged), never the watch.
final class WatchRecorder: Sendable {
    let recorder: StoreRecorder
    let scheduler: any Scheduler
    let log: ServiceLog?
    let interval: Duration
    let batchLimit: Int
    /// The device's name as BlueZ knows it now.
    let name: @Sendable (BluetoothAddress) -> String?
    private let state = Locked([BluetoothAddress: Batch]())

    /// What is collected for one device until its next save.
    struct Batch {
        var readings: [ChainRecording.Reading] = []
        var connected: Bool?
        var source: String
        var timer: (any Disposable)?
    }

    init(
        recorder: StoreRecorder, scheduler: any Scheduler, log: ServiceLog?, interval: Duration = .milliseconds(250),
        batchLimit: Int = 500, name: @escaping @Sendable (BluetoothAddress) -> String?
    ) {
        self.recorder = recorder
        self.scheduler = scheduler
        self.log = log
        self.interval = interval
        self.batchLimit = batchLimit
        self.name = name
    }

    /// A sink that records a watch's values and link state.
    func sink(source: String) -> any WatchSink {
        RecordingWatchSink(recorder: self, source: source)
    }

    /// Adds a reading of `address` (and its link state, when it changed).
    func add(_ reading: ChainRecording.Reading?, connected: Bool? = nil, of address: BluetoothAddress, source: String) {
        let (flushNow, scheduleTimer) = state.withLock { batches -> (Bool, Bool) in
            var batch = batches[address] ?? Batch(source: source)
            if let reading { batch.readings.append(reading) }
            if let connected { batch.connected = connected }
            let isFirst = batch.timer == nil
            if isFirst { batch.timer = AnyDisposable {} }
            batches[address] = batch
            return (batch.readings.count >= batchLimit, isFirst)
        }
        if flushNow {
            flush(address)
        } else if scheduleTimer {
            let timer = scheduler.schedule(after: interval) { [weak self] in self?.flush(address) }
            state.withLock { batches in
                if batches[address]?.timer != nil { batches[address]?.timer = timer }
            }
        }
    }

    /// Saves what is collected for `address` now.
    func flush(_ address: BluetoothAddress) {
        guard let batch = state.withLock({ $0.removeValue(forKey: address) }) else { return }
        batch.timer?.dispose()
        let recording = ChainRecording(
            chain: batch.source, address: address, name: name(address), connected: batch.connected ?? false,
            lastSeen: Date(), readings: batch.readings)
        let recorder = recorder
        let log = log
        Task {
            if let failure = await recorder.record(recording) {
                log?.warning("\(recording.chain): \(recording.readings.count) readings not recorded: \(failure)")
            }
        }
    }

    /// Saves everything collected now (the service stopping).
    func flushAll() {
        for address in state.withLock({ Array($0.keys) }) { flush(address) }
    }
}

/// A watch's values as readings under the characteristic as the watch named it, and its link state as the device's
/// `connected`.
struct RecordingWatchSink: WatchSink {
    let recorder: WatchRecorder
    let source: String

    func value(_ event: DeviceValueEvent) {
        let measurement = event.number.map { Quantity(number: $0, unit: event.unit) }
        recorder.add(
            ChainRecording.Reading(
                characteristic: event.characteristic.string, value: event.value, time: Date(), measurement: measurement),
            connected: true, of: event.address, source: source)
    }

    func link(_ event: DeviceLinkEvent) {
        guard event.state != .reconnecting else { return }
        recorder.add(nil, connected: event.state == .connected, of: event.address, source: source)
    }
}
