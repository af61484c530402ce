import ContextBusClient
import ContextBusDBus
import ContextBusSupport
import ContextBusWire
import Dispatch
import Foundation
@preconcurrency import Glibc

/// `bench devicewatch`: devicesvc's watches against bleak's `start_notify` on the same simulated BlueZ.
///
/// 1. **Notifications**: a watch of Echo Out on each of 4 devices (one `BusClient`), then the simulator streams
///    `values` notifications every 10 ms on every device at once (100 values/s each; `StartStream`: each value holds
///    its sequence number and the simulator's `CLOCK_MONOTONIC` at sending). Reports values delivered of those sent,
///    doubles, the delivery latency (the client's `CLOCK_MONOTONIC` when the `device.value` event arrived minus the
///    sending time) and the CPU of every process.
/// 2. **Reconnect**: a watch of Echo Out on one device with `reconnect` 20/20 ms (a retry every ~20 ms, as bleak's
///    loop below) while the simulator streams every 2 ms; `cycles` times the device goes out of range
///    (`SetInRange` false) for 150 ms and comes back: the time from `SetInRange(true)` answering to the first value
///    after it.
/// 3. devicesvc stopped, `scripts/bluezsim/bleak_watch_bench.py` does both with bleak on the same simulator:
///    `start_notify` with a callback, and a hand-written reconnect loop (new `BleakClient`, `connect()`,
///    `start_notify()`, wait for the disconnected callback, sleep 20 ms after a failure).
enum DeviceWatchBenchmark {
    static let devices = Array(DeviceBenchmark.devices.prefix(4))
    static let echoOut = BluetoothUUID("c0defeed-0002-4000-8000-000000000000")!
    static let values = 1000
    static let intervalMs: UInt32 = 10
    static let cycles = 20
    static let retryMs = 20

    static func run() throws {
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        let simulator = try DeviceBenchmark.Simulator.start(options: ["--cached", "all"])
        defer { simulator.stop() }
        let control = try DeviceBenchmark.blocking { try await DBusConnection.connect(to: simulator.busAddress) }
        defer { control.close() }
        let stack = [("simulator", simulator.pid), ("dbus-daemon", simulator.daemonPID)]

        let socket = simulator.directory + "/device.sock"
        let service = try DeviceBenchmark.startService(bus: simulator.busAddress, socket: socket)
        let client = try DeviceBenchmark.connect(to: socket)
        let cpu = DeviceBenchmark.CPUWatch([("devicesvc", service.pid), ("bench client", getpid())] + stack)
        let notifications = try measureNotifications(client, control: control, cpu: cpu)
        try call(control, "StopStreams")
        let reconnect = try measureReconnects(client, control: control)
        try call(control, "StopStreams")
        client.close()
        _ = service.terminate()

        let bleak = try runBleak(bus: simulator.busAddress, watching: stack)
        printReport(devicesvc: (notifications, reconnect), bleak: bleak, load: load)
    }

    // MARK: - Phases

    /// What one client's notification phase measured.
    struct Notifications {
        var sent: Int
        var delivered: Int
        var doubled: Int
        var seconds: Double
        var latency: DeviceBenchmark.Summary
        var cpuSeconds: [String: Double]
    }

    /// What one client's reconnect phase measured: milliseconds from the device returning to the first value.
    struct Reconnects {
        var cycles: Int
        var times: DeviceBenchmark.Summary?
        var measured: Int
    }

    static func measureNotifications(
        _ client: BusClient, control: DBusConnection, cpu: DeviceBenchmark.CPUWatch
    ) throws -> Notifications {
        let received = Locked([String: [UInt32]]())
        let latencies = Locked([Double]())
        let connected = Locked(Set<Int64>())
        let valuesObservation = client.events(DeviceValueEvent.self).startWithValues { event in
            let now = monotonicNanoseconds()
            let (sequence, sent) = decode(event.value)
            received.withLock { $0[event.address.string, default: []].append(sequence) }
            latencies.withLock { $0.append(Double(Int64(now) - Int64(sent)) / 1e6) }
        }
        defer { valuesObservation.dispose() }
        let linksObservation = client.events(DeviceLinkEvent.self).startWithValues { event in
            if event.state == .connected { connected.withLock { _ = $0.insert(event.watch) } }
        }
        defer { linksObservation.dispose() }
        var watches: [Int64] = []
        for device in devices {
            watches.append(
                try client.callAndWait(
                    DeviceWatch.self, WatchParams(address: BluetoothAddress(device)!, notify: [echoOut])
                ).watch)
        }
        try waitUntil(seconds: 30) { connected.withLock { $0.count } == devices.count }
        let before = cpu.sample()
        let start = ContinuousClock.now
        for device in devices {
            try call(
                control, "StartStream",
                [.string("\(device)/\(echoOut.canonical)"), .uint32(intervalMs), .uint32(UInt32(values))])
        }
        let expected = values * devices.count
        _ = try? waitUntil(seconds: Double(values) * Double(intervalMs) / 1000 + 10) {
            received.withLock { $0.values.reduce(0) { $0 + Set($1).count } } >= expected
        }
        usleep(200_000)  // anything doubled arrives too
        let seconds = (ContinuousClock.now - start) / .seconds(1)
        let after = cpu.sample()
        for watch in watches { _ = try? client.callAndWait(DeviceUnwatch.self, WatchReference(watch: watch)) }
        let all = received.withLock { $0 }
        return Notifications(
            sent: expected, delivered: all.values.reduce(0) { $0 + Set($1).count },
            doubled: all.values.reduce(0) { $0 + $1.count - Set($1).count }, seconds: seconds,
            latency: DeviceBenchmark.Summary(latencies.withLock { $0 }),
            cpuSeconds: after.merging(before) { $0 - $1 })
    }

    static func measureReconnects(_ client: BusClient, control: DBusConnection) throws -> Reconnects {
        let device = devices[0]
        let arrivals = Locked([UInt64]())
        let observation = client.events(DeviceValueEvent.self).startWithValues { _ in
            let now = monotonicNanoseconds()
            arrivals.withLock { $0.append(now) }
        }
        defer { observation.dispose() }
        let watch = try client.callAndWait(
            DeviceWatch.self,
            WatchParams(
                address: BluetoothAddress(device)!, notify: [echoOut],
                reconnect: ReconnectPolicy(minMs: retryMs, maxMs: retryMs))
        ).watch
        try call(control, "StartStream", [.string("\(device)/\(echoOut.canonical)"), .uint32(2), .uint32(10_000_000)])
        try waitUntil(seconds: 30) { !arrivals.withLock { $0 }.isEmpty }
        var times: [Double] = []
        for _ in 0..<cycles {
            try call(control, "SetInRange", [.string(device), .boolean(false)])
            usleep(150_000)
            try call(control, "SetInRange", [.string(device), .boolean(true)])
            let back = monotonicNanoseconds()
            let first = {
                arrivals.withLock { $0.last(where: { $0 > back }) == nil ? nil : $0.first(where: { $0 > back }) }
            }
            _ = try? waitUntil(seconds: 10) { first() != nil }
            if let at = first() { times.append(Double(at - back) / 1e6) }
            usleep(100_000)
        }
        _ = try? client.callAndWait(DeviceUnwatch.self, WatchReference(watch: watch))
        return Reconnects(
            cycles: cycles, times: times.isEmpty ? nil : DeviceBenchmark.Summary(times), measured: times.count)
    }

    // MARK: - bleak

    /// bleak_watch_bench.py's results on the same simulator; `nil` when it did not run.
    static func runBleak(bus: String, watching: [(name: String, pid: pid_t)]) throws -> (Notifications, Reconnects)? {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("bench-bleak-watch-\(getpid()).out")
            .path
        defer { try? FileManager.default.removeItem(atPath: output) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus, 1)
        let status = try ChildProcess.run(
            DeviceBenchmark.repositoryRoot + "/scripts/bluez-sim",
            [
                "--python", DeviceBenchmark.repositoryRoot + "/scripts/bluezsim/bleak_watch_bench.py", "--use-running",
                "--devices", String(devices.count), "--values", String(values), "--interval-ms", String(intervalMs),
                "--cycles", String(cycles), "--retry-ms", String(retryMs),
            ] + watching.flatMap { ["--watch", "\($0.name)=\($0.pid)"] },
            standardOutput: output)
        let data = (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data()
        guard status == 0,
            let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let json = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let notes = json["notifications"] as? [String: Any], let reconnect = json["reconnect"] as? [String: Any]
        else {
            print("devicewatch: bleak did not run (status \(status)):\n\(String(decoding: data, as: UTF8.self))")
            return nil
        }
        func summary(_ value: Any?) -> DeviceBenchmark.Summary? {
            guard let ms = value as? [String: Double], let mean = ms["mean"], let p50 = ms["p50"], let p90 = ms["p90"],
                let p99 = ms["p99"], let max = ms["max"]
            else { return nil }
            return DeviceBenchmark.Summary(mean: mean, p50: p50, p90: p90, p99: p99, max: max)
        }
        let cpu = (notes["cpu_s"] as? [String: Double] ?? [:]).reduce(into: [String: Double]()) {
            $0[$1.key == "client" ? "bleak" : $1.key] = $1.value
        }
        return (
            Notifications(
                sent: notes["sent"] as? Int ?? 0, delivered: notes["delivered"] as? Int ?? 0,
                doubled: notes["duplicates"] as? Int ?? 0, seconds: notes["seconds"] as? Double ?? 0,
                latency: summary(notes["latency_ms"]) ?? DeviceBenchmark.Summary([0]), cpuSeconds: cpu),
            Reconnects(
                cycles: reconnect["cycles"] as? Int ?? 0, times: summary(reconnect["ms"]),
                measured: reconnect["measured"] as? Int ?? 0)
        )
    }

    // MARK: - Report

    static func printReport(
        devicesvc: (Notifications, Reconnects), bleak: (Notifications, Reconnects)?, load: String
    ) {
        let loadFigures = load.split(separator: " ").prefix(3).joined(separator: " ")
        print(
            "devicewatch: \(devices.count) devices × \(values) notifications every \(intervalMs) ms (Echo Out); "
                + "reconnect: \(cycles) cycles, retry every \(retryMs) ms; load average at start \(loadFigures)")
        print("")
        print(
            "| client | delivered | doubled | mean ms | p50 | p90 | p99 | max | client CPU s | simulator CPU s | dbus-daemon CPU s |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        var rows = [("devicesvc", devicesvc.0)]
        if let bleak { rows.append(("bleak", bleak.0)) }
        for (name, n) in rows {
            let client = n.cpuSeconds.filter { !["simulator", "dbus-daemon"].contains($0.key) }.values.reduce(0, +)
            print(
                "| \(name) | \(n.delivered)/\(n.sent) | \(n.doubled) | \(f(n.latency.mean)) | \(f(n.latency.p50)) | "
                    + "\(f(n.latency.p90)) | \(f(n.latency.p99)) | \(f(n.latency.max)) | \(f(client)) | "
                    + "\(f(n.cpuSeconds["simulator"] ?? 0)) | \(f(n.cpuSeconds["dbus-daemon"] ?? 0)) |")
        }
        print("")
        print("| client | reconnect: device back → first value, ms | mean | p50 | p90 | p99 | max |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        var reconnects = [("devicesvc watch", devicesvc.1)]
        if let bleak { reconnects.append(("bleak + hand-written loop", bleak.1)) }
        for (name, r) in reconnects {
            guard let t = r.times else {
                print("| \(name) | 0/\(r.cycles) measured | | | | | |")
                continue
            }
            print(
                "| \(name) | \(r.measured)/\(r.cycles) | \(f(t.mean)) | \(f(t.p50)) | \(f(t.p90)) | \(f(t.p99)) | "
                    + "\(f(t.max)) |")
        }
        if let bleak {
            print("")
            print(
                "devicesvc p99 delivery \(f(devicesvc.0.latency.p99)) ms vs bleak \(f(bleak.0.latency.p99)) ms; "
                    + "reconnect p50 \(f(devicesvc.1.times?.p50 ?? .nan)) ms vs bleak \(f(bleak.1.times?.p50 ?? .nan)) ms"
            )
        }
    }

    // MARK: - Helpers

    static func f(_ value: Double) -> String { String(format: "%.2f", value) }

    /// The sequence number and sending time (ns) a simulator stream put in a value.
    static func decode(_ value: Data) -> (UInt32, UInt64) {
        let bytes = Array(value)
        guard bytes.count >= 12 else { return (0, 0) }
        var sequence: UInt32 = 0
        for index in 0..<4 { sequence |= UInt32(bytes[index]) << (8 * UInt32(index)) }
        var sent: UInt64 = 0
        for index in 0..<8 { sent |= UInt64(bytes[4 + index]) << (8 * UInt64(index)) }
        return (sequence, sent)
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// Calls the simulator's control interface and waits for the answer.
    static func call(_ control: DBusConnection, _ member: String, _ body: [DBusValue] = []) throws {
        let message = DBusMessage.methodCall(
            destination: "org.contextbus.BlueZSim", path: .root, interface: "org.contextbus.BlueZSim.Control",
            member: member, body: body)
        let outcome = Locked<Result<DBusMessage, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        _ = control.call(message, timeout: .seconds(20)) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        _ = try outcome.withLock { $0 }!.get()
    }

    struct Timeout: Error {}

    static func waitUntil(seconds: Double, _ condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int64(seconds * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else { throw Timeout() }
            usleep(1_000)
        }
    }
}
