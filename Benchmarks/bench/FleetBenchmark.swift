import CContextBusNATS
import ContextBusClient
import ContextBusSupport
import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization

/// `scripts/bench fleet`: replication from gateway a into a hub (storesvc + fleetsvc each, a real
/// `nats-server -js` on 127.0.0.1), against the floor measured in the same run: raw JetStream publish-with-ack and
/// an ordered consumer of the same payloads through libnats (docs/fleet.md, "Performance").
///
/// - throughput: objects/s from gateway a's saves (one reading per transaction, 8 clients) into the hub's store;
///   the floor: min(publish-with-ack rate, consume rate) of the same number of messages.
/// - lag at 1,000 saves/s: a's save answered → the hub's `store.changed` event, p50/p99; the floor: publish
///   call → message received by a consumer, at 1,000 messages/s.
enum FleetBenchmark {
    static let objects = ProcessInfo.processInfo.environment["CTXBUS_BENCH_FLEET_OBJECTS"].flatMap { Int($0) } ?? 3_000
    static let lagSeconds = 3

    static func run() throws {
        let processes = ProcessGroup()
        defer { processes.stopAll() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ctxbus-bench-fleet-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = 20_000 + Int(getpid() % 20_000)
        let url = "nats://127.0.0.1:\(port)"
        let natsServer = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        guard let natsServer else {
            throw StoreBusBenchmark.BenchError("nats-server is not installed (scripts/setup installs it)")
        }
        try processes.start(
            natsServer, ["-js", "-a", "127.0.0.1", "-p", String(port), "-sd", directory.path + "/nats"])
        usleep(500_000)

        let floor = try measureFloor(url: url)

        let binaries = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for name in ["a", "hub"] {
            try processes.start(
                binaries.appendingPathComponent("storesvc").path,
                [
                    "--socket", directory.path + "/\(name).sock", "--database", directory.path + "/\(name).sqlite",
                    "--log-level", "warning",
                ])
        }
        usleep(300_000)
        for name in ["a", "hub"] {
            try processes.start(
                binaries.appendingPathComponent("fleetsvc").path,
                [
                    "--gateway", name, "--store", directory.path + "/\(name).sock", "--socket",
                    directory.path + "/\(name)-fleet.sock", "--nats", url, "--log-level", "warning",
                ])
        }
        let a = try wait { try await connect(directory.path + "/a.sock") }
        let hub = try wait { try await connect(directory.path + "/hub.sock") }
        _ = try wait {
            try await a.call(
                method: "store.save",
                params: .object([
                    "insert": .array([
                        .object([
                            "entity": .string("Device"),
                            "values": .object(["address": .string("AA:00:00:00:00:01"), "name": .string("bench")]),
                        ])
                    ])
                ]))
        }
        try waitForCount(hub, readings: 0, devices: 1)
        let device = "Device/1"

        // Throughput: `objects` single-reading saves from 8 clients; until the hub holds them all.
        let started = DispatchTime.now().uptimeNanoseconds
        try wait {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for client in 0..<8 {
                    group.addTask {
                        for i in stride(from: client, to: objects, by: 8) {
                            _ = try await a.call(method: "store.save", params: reading("t\(i)", device: device))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let saved = DispatchTime.now().uptimeNanoseconds
        try waitForCount(hub, readings: objects, devices: 1)
        let arrived = DispatchTime.now().uptimeNanoseconds
        let throughput = Double(objects) / (Double(arrived - started) / 1e9)
        let saveRate = Double(objects) / (Double(saved - started) / 1e9)

        // Lag at 1,000 saves/s.
        let arrivals = Locked<[String: UInt64]>([:])
        let observation = hub.events(method: "store.changed").startWithValues { event in
            let now = DispatchTime.now().uptimeNanoseconds
            let inserted = event.params.objectValue?["inserted"]?.arrayValue ?? []
            arrivals.withLock { arrivals in
                for object in inserted {
                    if let name = object.objectValue?["values"]?.objectValue?["characteristic"]?.stringValue {
                        arrivals[name] = now
                    }
                }
            }
        }
        defer { observation.dispose() }
        _ = try wait {
            try await hub.call(method: "store.subscribe", params: .object(["entity": .string("Reading")]))
        }
        let committed = Locked<[String: UInt64]>([:])
        let count = 1_000 * lagSeconds
        let pacedStart = DispatchTime.now().uptimeNanoseconds
        let done = DispatchGroup()
        for i in 0..<count {
            let due = pacedStart + UInt64(i) * 1_000_000
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now { usleep(UInt32((due - now) / 1_000)) }
            done.enter()
            let name = "lag\(i)"
            Task {
                _ = try? await a.call(method: "store.save", params: reading(name, device: device))
                let answered = DispatchTime.now().uptimeNanoseconds
                committed.withLock { $0[name] = answered }
                done.leave()
            }
        }
        done.wait()
        try waitForCount(hub, readings: objects + count, devices: 1)
        usleep(200_000)
        let lags = committed.withLock { $0 }.compactMap { name, at -> Double? in
            guard let arrival = arrivals.withLock({ $0[name] }) else { return nil }
            return Double(Int64(arrival) - Int64(at)) / 1e6
        }.sorted()

        print(
            "fleet: gateway a → hub through nats-server -js on 127.0.0.1, \(ProcessInfo.processInfo.activeProcessorCount) CPUs"
        )
        let rows: [[String]] = [
            [
                "throughput (objects/s)", String(format: "%.0f", throughput),
                String(
                    format: "%.0f (publish %.0f, consume %.0f)", min(floor.publishRate, floor.consumeRate),
                    floor.publishRate, floor.consumeRate),
                String(format: "%.2f×", throughput / min(floor.publishRate, floor.consumeRate)),
            ],
            [
                "a's saves/s meanwhile", String(format: "%.0f", saveRate), "-", "-",
            ],
            [
                "lag p50 (ms) at 1,000/s", String(format: "%.2f", percentile(lags, 0.5)),
                String(format: "%.2f", percentile(floor.lags, 0.5)),
                String(format: "%.1f×", percentile(lags, 0.5) / max(percentile(floor.lags, 0.5), 0.001)),
            ],
            [
                "lag p99 (ms) at 1,000/s", String(format: "%.2f", percentile(lags, 0.99)),
                String(format: "%.2f", percentile(floor.lags, 0.99)),
                String(format: "%.1f×", percentile(lags, 0.99) / max(percentile(floor.lags, 0.99), 0.001)),
            ],
            ["lag samples", String(lags.count), String(floor.lags.count), "-"],
        ]
        printTable(["measure", "fleet", "floor (raw libnats)", "fleet / floor"], rows)
        a.close()
        hub.close()
    }

    private static func reading(_ name: String, device: String) -> JSONValue {
        .object([
            "insert": .array([
                .object([
                    "entity": .string("Reading"),
                    "values": .object([
                        "characteristic": .string(name), "value": .string("Wg=="),
                        "time": .string("2026-01-01T00:00:00Z"), "device": .string(device),
                    ]),
                ])
            ])
        ])
    }

    private static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    private static func connect(_ path: String) async throws -> BusClient {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try await BusClient.connect(to: path, clientName: "bench-fleet")
            } catch {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    private static func waitForCount(_ hub: BusClient, readings: Int, devices: Int) throws {
        let deadline = ContinuousClock.now + .seconds(300)
        while ContinuousClock.now < deadline {
            let counts = try wait { () async throws -> (Int64, Int64) in
                let r = try await hub.call(
                    method: "store.fetch", params: .object(["entity": .string("Reading"), "result": .string("count")]))
                let d = try await hub.call(
                    method: "store.fetch", params: .object(["entity": .string("Device"), "result": .string("count")]))
                return (r.objectValue?["count"]?.intValue ?? 0, d.objectValue?["count"]?.intValue ?? 0)
            }
            if counts.0 >= Int64(readings), counts.1 >= Int64(devices) { return }
            usleep(5_000)
        }
        throw StoreBusBenchmark.BenchError("the hub did not receive \(readings) readings in time")
    }

    /// Runs `body` and blocks this (non-pool) thread until it ends.
    private static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let outcome = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Result<T, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    private static func printTable(_ columns: [String], _ rows: [[String]]) {
        let widths = columns.indices.map { i in ([columns[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        print(line(columns))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { print(line(row)) }
    }

    // MARK: - The floor: raw libnats

    struct Floor {
        var publishRate: Double
        var consumeRate: Double
        var lags: [Double]
    }

    /// A payload the size of one reading's fleet message.
    static let payload = Array(
        (#"{"v":1,"gateway":"a","txn":123456,"prev":123455,"clock":1795860000123456,"inserted":[{"id":"a:Reading/123456","#
            + #""entity":"Reading","values":{"characteristic":"t123456","value":"Wg==","time":"2026-01-01T00:00:00.000Z","#
            + #""chain":null,"device":"a:Device/1"}}],"updated":[],"deleted":[]}"#).utf8)

    private static func measureFloor(url: String) throws -> Floor {
        var connection: OpaquePointer?
        guard natsConnection_ConnectTo(&connection, url) == NATS_OK, let connection else {
            throw StoreBusBenchmark.BenchError("cannot connect to \(url)")
        }
        defer { natsConnection_Destroy(connection) }
        var js: OpaquePointer?
        guard natsConnection_JetStream(&js, connection, nil) == NATS_OK, let js else {
            throw StoreBusBenchmark.BenchError("no JetStream context")
        }
        defer { jsCtx_Destroy(js) }
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        var code = jsErrCode(0)
        let subject = strdup("floor.>")
        defer { free(subject) }
        var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(subject)]
        let status = "FLOOR".withCString { name in
            subjects.withUnsafeMutableBufferPointer { buffer in
                config.Name = name
                config.Subjects = buffer.baseAddress
                config.SubjectsLen = 1
                config.Storage = js_FileStorage
                return js_AddStream(nil, js, &config, nil, &code)
            }
        }
        guard status == NATS_OK else { throw StoreBusBenchmark.BenchError("cannot create the floor stream") }

        // Publish-with-ack, one at a time, each with a message ID (as fleetsvc publishes).
        let started = DispatchTime.now().uptimeNanoseconds
        for i in 0..<objects { try publish(js, "floor.a.txn", payload, id: "f\(i)") }
        let published = DispatchTime.now().uptimeNanoseconds
        // An ordered consumer of all of them.
        var sub: OpaquePointer?
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Ordered = true
        guard js_SubscribeSync(&sub, js, "floor.a.txn", nil, &options, &code) == NATS_OK, let sub else {
            throw StoreBusBenchmark.BenchError("cannot subscribe")
        }
        let consuming = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<objects {
            var message: OpaquePointer?
            guard natsSubscription_NextMsg(&message, sub, 10_000) == NATS_OK else { break }
            natsMsg_Destroy(message)
        }
        let consumed = DispatchTime.now().uptimeNanoseconds
        natsSubscription_Destroy(sub)

        // Lag at 1,000/s: publish call → an ordered consumer (on its own thread) has the message.
        var lagSub: OpaquePointer?
        var lagOptions = jsSubOptions()
        jsSubOptions_Init(&lagOptions)
        lagOptions.Ordered = true
        guard js_SubscribeSync(&lagSub, js, "floor.lag", nil, &lagOptions, &code) == NATS_OK, let lagSub else {
            throw StoreBusBenchmark.BenchError("cannot subscribe")
        }
        let count = 1_000 * lagSeconds
        let sent = Locked<[UInt64]>(Array(repeating: 0, count: count))
        let received = Locked<[UInt64]>(Array(repeating: 0, count: count))
        let subscription = SendablePointer(lagSub)
        let readerDone = DispatchSemaphore(value: 0)
        let readerThread = Thread {
            defer { readerDone.signal() }
            for i in 0..<count {
                var message: OpaquePointer?
                guard natsSubscription_NextMsg(&message, subscription.pointer, 10_000) == NATS_OK else { return }
                let now = DispatchTime.now().uptimeNanoseconds
                received.withLock { $0[i] = now }
                natsMsg_Destroy(message)
            }
        }
        readerThread.start()
        let pacedStart = DispatchTime.now().uptimeNanoseconds
        for i in 0..<count {
            let due = pacedStart + UInt64(i) * 1_000_000
            let now = DispatchTime.now().uptimeNanoseconds
            if due > now { usleep(UInt32((due - now) / 1_000)) }
            let at = DispatchTime.now().uptimeNanoseconds
            sent.withLock { $0[i] = at }
            try publish(js, "floor.lag", payload, id: "l\(i)")
        }
        readerDone.wait()
        natsSubscription_Destroy(lagSub)
        let sentTimes = sent.withLock { $0 }
        let receivedTimes = received.withLock { $0 }
        let lags = zip(sentTimes, receivedTimes).compactMap { s, r in r > s ? Double(r - s) / 1e6 : nil }.sorted()
        return Floor(
            publishRate: Double(objects) / (Double(published - started) / 1e9),
            consumeRate: Double(objects) / (Double(consumed - consuming) / 1e9), lags: lags)
    }

    private struct SendablePointer: @unchecked Sendable {
        // @unchecked Sendable: the subscription is used by the reader thread alone until it is destroyed.
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    private static func publish(_ js: OpaquePointer, _ subject: String, _ data: [UInt8], id: String) throws {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        var code = jsErrCode(0)
        var ack: UnsafeMutablePointer<jsPubAck>?
        let status = id.withCString { cID in
            options.MsgId = cID
            return data.withUnsafeBytes {
                js_Publish(&ack, js, subject, $0.baseAddress, Int32($0.count), &options, &code)
            }
        }
        if let ack { jsPubAck_Destroy(ack) }
        guard status == NATS_OK else { throw StoreBusBenchmark.BenchError("publish failed: \(status)") }
    }
}
