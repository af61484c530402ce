import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// `device.watch` against the simulated BlueZ, over real sockets: the real `devicesvc` process, one simulator per test.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceWatchTests {
    static let first = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let battery = BluetoothUUID("2a19")!
    static let temperature = BluetoothUUID("2a6e")!
    static let echoOut = BluetoothUUID("c0defeed-0002-4000-8000-000000000000")!
    static let echoOutTarget = "AA:BB:CC:DD:EE:01/c0defeed-0002-4000-8000-000000000000"
    static let quickNotifications = ["--timing", "notify_ms=20"]

    func watch(
        _ client: BusClient, _ uuids: [BluetoothUUID], reconnect: ReconnectPolicy = .standard,
        address: BluetoothAddress = Self.first
    ) async throws -> Int64 {
        try await client.call(DeviceWatch.self, WatchParams(address: address, notify: uuids, reconnect: reconnect))
            .watch
    }

    /// The calls of the device (property reads and introspection left out).
    func calls(_ simulator: BlueZSimulator, _ address: BluetoothAddress = Self.first) async throws -> [String] {
        let ignored: Set<String> = ["Get", "GetAll", "GetManagedObjects", "Introspect"]
        return try await simulator.callLog().filter { $0.address == address.string && !ignored.contains($0.method) }
            .map(\.method)
    }

    /// The sequence number a simulator stream put in a value.
    static func sequence(_ value: Data) -> UInt32 {
        value.prefix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    // MARK: - A watch

    @Test func aWatchConnectsEnablesNotificationsOnceAndSendsDecodedValuesUntilUnwatched() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickNotifications) { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.battery])
            try await waitUntil("three values") { log.values(of: id).count >= 3 }
            expectEqual(log.states(of: id).first, .connected)
            let values = log.values(of: id)
            expectTrue(values.allSatisfy { $0.number == Double($0.value.first ?? 0) && $0.unit == "%" })
            expectTrue(values.allSatisfy { $0.characteristic == Self.battery && $0.address == Self.first })
            _ = try await stack.client.call(DeviceUnwatch.self, WatchReference(watch: id))
            try await waitUntil("the disconnect") { try await calls(stack.simulator).contains("Disconnect") }
            let after = log.values(of: id).count
            try await Task.sleep(for: .milliseconds(100))
            expectEqual(log.values(of: id).count, after)
            try await expectEqual(calls(stack.simulator), ["Connect", "StartNotify", "StopNotify", "Disconnect"])
            await #expect(throws: RPCError.self) {
                _ = try await stack.client.call(DeviceUnwatch.self, WatchReference(watch: id))
            }
        }
    }

    @Test func watchRefusesUnknownDevicesAndAdaptersAndCharacteristicsThatCannotNotify() async throws {
        try await withSimulatedStack { stack in
            for (params, code) in [
                (
                    WatchParams(address: BluetoothAddress("AA:BB:CC:DD:EE:09")!, notify: [Self.battery]),
                    RPCErrorCode.notFound
                ),
                (WatchParams(address: Self.first, notify: [Self.battery], adapter: "hci7"), .notFound),
                (WatchParams(address: Self.first, notify: [BluetoothUUID("2a00")!]), .notFound),
                (WatchParams(address: Self.first, notify: [BluetoothUUID("2a29")!]), .invalidParams),
            ] {
                do {
                    _ = try await stack.client.call(DeviceWatch.self, params)
                    Issue.record("\(params.json) was accepted")
                } catch let error as RPCError {
                    expectEqual(error.code, code, "\(params.json): \(error)")
                }
            }
            try await expectEqual(calls(stack.simulator), [])
        }
    }

    // MARK: - Faults

    @Test func aDroppedLinkIsReconnectedWithGrowingDelaysAndNoValueIsDoubled() async throws {
        try await withSimulatedStack { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.echoOut], reconnect: ReconnectPolicy(minMs: 50, maxMs: 400))
            try await waitUntil("connected") { log.states(of: id) == [.connected] }
            try await stack.simulator.startStream(Self.echoOutTarget, intervalMs: 10, count: 100_000)
            try await waitUntil("values before the drop") { log.values(of: id).count >= 10 }
            try await stack.simulator.setInRange(Self.first.string, false)
            try await waitUntil("four reconnect attempts") {
                log.states(of: id).filter { $0 == .reconnecting }.count >= 4
            }
            let before = log.values(of: id).count
            try await stack.simulator.setInRange(Self.first.string, true)
            try await waitUntil("connected again") { log.states(of: id).last == .connected }
            try await waitUntil("values after the reconnect") { log.values(of: id).count >= before + 10 }
            try await stack.simulator.stopStreams()
            // Exactly the values the simulator sent while a link was up, each once, in order: none dropped before the
            // link was lost or after it came back, none doubled (those sent while it was down reached nobody).
            let delivered = try await stack.simulator.streamDeliveries(Self.echoOutTarget)
            try await waitUntil("every value sent") { log.values(of: id).count >= delivered.count }
            let sequences = log.values(of: id).map { Self.sequence($0.value) }
            expectEqual(sequences, delivered)
            expectTrue(delivered.count < (delivered.last ?? 0) + 1, "no value was sent while the link was down")
            let links = log.links(of: id)
            expectEqual(links.first?.event.state, .connected)
            expectEqual(links[1].event.state, .disconnected)
            let attempts = links.filter { $0.event.state == .reconnecting }
            expectEqual(attempts.compactMap(\.event.attempt), Array(1...attempts.count))
            // The delays themselves are ReconnectBackoff's, tested exactly in DevicePushUnitTests; here only that the
            // service waits them: 100 + 200 + 400 ms (-20 %) at least between the first and the fourth attempt, halved
            // because these are the times events reached the client (a loaded machine delivers them in bursts).
            let span = (attempts[3].at - attempts[0].at) / .milliseconds(1)
            expectTrue(span >= 0.5 * 0.8 * (100 + 200 + 400), "attempts 1 to 4 within \(span) ms")
            // One link set-up per attempt that reached BlueZ, notifications enabled once per link.
            let log2 = try await calls(stack.simulator)
            expectEqual(log2.filter { $0 == "StartNotify" }.count, 2)
            expectEqual(log2.filter { $0 == "Connect" }.count, 1 + attempts.count)
            // device.stats counts the watch and every reconnect attempt.
            let stats = try await stack.client.call(DeviceStats.self, EmptyObject())
            expectEqual(stats.watches, 1)
            expectEqual(stats.reconnects, Int64(attempts.count))
            expectEqual(stats.discoveries, 0)
        }
    }

    @Test func aWatchRidesOutBlueZRestarting() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickNotifications) { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.battery], reconnect: ReconnectPolicy(minMs: 50, maxMs: 500))
            try await waitUntil("values") { log.values(of: id).count >= 2 }
            try await stack.simulator.stopBluetoothd()
            try await waitUntil("disconnected") { log.states(of: id).contains(.disconnected) }
            try await Task.sleep(for: .milliseconds(200))
            try await stack.simulator.startBluetoothd()
            try await waitUntil("connected again") { log.states(of: id).filter { $0 == .connected }.count == 2 }
            let before = log.values(of: id).count
            try await waitUntil("values from the new bluetoothd") { log.values(of: id).count >= before + 2 }
            let disconnected = log.links(of: id).first { $0.event.state == .disconnected }?.event
            expectEqual(disconnected?.error, "BlueZ left the bus")
            expectEqual(log.states(of: id).last, .connected)
        }
    }

    @Test func aDeviceThatNeverComesBackIsTriedForeverAtTheCapUntilUnwatched() async throws {
        try await withSimulatedStack { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.echoOut], reconnect: ReconnectPolicy(minMs: 20, maxMs: 80))
            try await waitUntil("connected") { log.states(of: id) == [.connected] }
            try await stack.simulator.setInRange(Self.first.string, false)
            try await waitUntil("nine attempts") { log.states(of: id).filter { $0 == .reconnecting }.count >= 9 }
            let attempts = log.links(of: id).filter { $0.event.state == .reconnecting }
            expectEqual(attempts.compactMap(\.event.attempt), Array(1...attempts.count))
            expectEqual(attempts.last?.event.error, "org.bluez.Error.Failed: le-connection-timeout")
            // At the cap, at least 64 ms (80 ms less its jitter) between attempts: over the last four, halved for the
            // bursts in which a loaded machine delivers the events (the delays are tested exactly in
            // DevicePushUnitTests).
            let span = (attempts[attempts.count - 1].at - attempts[attempts.count - 5].at) / .milliseconds(1)
            expectTrue(span >= 0.5 * 4 * 64, "the last four attempts within \(span) ms")
            _ = try await stack.client.call(DeviceUnwatch.self, WatchReference(watch: id))
            try await Task.sleep(for: .milliseconds(50))
            let connects = try await stack.simulator.countCalls(Self.first.string, "Connect")
            let events = log.links(of: id).count
            try await Task.sleep(for: .milliseconds(300))
            try await expectEqual(stack.simulator.countCalls(Self.first.string, "Connect"), connects)
            expectEqual(log.links(of: id).count, events)
        }
    }

    @Test func aFailingStartNotifyDisconnectsAndTheNextLinkEnablesIt() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickNotifications) { stack in
            try await stack.simulator.fail(
                "AA:BB:CC:DD:EE:01/2a19", "StartNotify", with: "org.bluez.Error.Failed",
                message: "Operation failed with ATT error: 0x0e")
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.battery], reconnect: ReconnectPolicy(minMs: 50, maxMs: 500))
            try await waitUntil("connected") { log.states(of: id).contains(.connected) }
            try await waitUntil("values") { log.values(of: id).count >= 2 }
            expectEqual(log.states(of: id), [.disconnected, .reconnecting, .connected])
            expectTrue(log.links(of: id)[0].event.error?.contains("ATT error: 0x0e") == true)
            try await expectEqual(
                calls(stack.simulator), ["Connect", "StartNotify", "Disconnect", "Connect", "StartNotify"])
        }
    }

    // MARK: - Several watchers

    @Test func twoClientsWatchingOneDeviceShareOneLinkAndBothGetEveryValue() async throws {
        try await withSimulatedStack { stack in
            let other = try await stack.service.makeClient(name: "other")
            defer { other.close() }
            let logA = WatchEventLog(stack.client)
            let logB = WatchEventLog(other)
            defer {
                logA.dispose()
                logB.dispose()
            }
            let a = try await watch(stack.client, [Self.echoOut])
            let b = try await watch(other, [Self.echoOut])
            try await waitUntil("both connected") {
                logA.states(of: a) == [.connected] && logB.states(of: b) == [.connected]
            }
            try await stack.simulator.startStream(Self.echoOutTarget, intervalMs: 5, count: 30)
            try await waitUntil("30 values each") { logA.values(of: a).count == 30 && logB.values(of: b).count == 30 }
            expectEqual(logA.values(of: a).map { Self.sequence($0.value) }, Array(0..<30))
            expectEqual(logB.values(of: b).map { Self.sequence($0.value) }, Array(0..<30))
            _ = try await stack.client.call(DeviceUnwatch.self, WatchReference(watch: a))
            _ = try await stack.simulator.notifyMany(Self.echoOutTarget, [7], count: 3)
            try await waitUntil("B's values after A left") { logB.values(of: b).count == 33 }
            try await expectEqual(calls(stack.simulator), ["Connect", "StartNotify"])
            _ = try await other.call(DeviceUnwatch.self, WatchReference(watch: b))
            try await waitUntil("the disconnect") { try await calls(stack.simulator).contains("Disconnect") }
            try await expectEqual(calls(stack.simulator), ["Connect", "StartNotify", "StopNotify", "Disconnect"])
            expectEqual(logA.values(of: a).count, 30)
        }
    }

    @Test func aWatcherThatStopsReadingIsDroppedAndTheLinkStaysForTheOtherWatch() async throws {
        try await withSimulatedStack { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            // The reader watches the battery; the stalled peer Echo Out, on the same link, and never reads.
            let id = try await watch(stack.client, [Self.battery])
            try await waitUntil("connected") { log.states(of: id) == [.connected] }
            let stalled = try StalledPeer(path: stack.service.socketPath)
            try stalled.send(
                #"{"jsonrpc":"2.0","id":1,"method":"bus.hello","params":{"protocol":1,"client":"stalled"}}"#)
            try stalled.send(
                #"{"jsonrpc":"2.0","id":2,"method":"device.watch","params":{"address":"AA:BB:CC:DD:EE:01","notify":["c0defeed-0002-4000-8000-000000000000"]}}"#
            )
            try await waitUntil("the stalled peer's notifications on") {
                try await calls(stack.simulator).filter { $0 == "StartNotify" }.count == 2
            }
            // 3 600 events of 2 KiB values (about 10 MB of JSON) are more than the stalled peer's outbound queue
            // (8 MiB) and its socket buffers hold: it is dropped, and its watch with it.
            let count: UInt32 = 3_600
            var sent: UInt32 = 0
            for _ in 0..<4 {
                sent += try await stack.simulator.notifyMany(
                    Self.echoOutTarget, Array(repeating: 0x5A, count: 2048), count: count / 4)
            }
            expectEqual(sent, count)
            // Its watch gone, nobody wants Echo Out: its notifications are turned off; the link stays for the reader.
            try await waitUntil("Echo Out's StopNotify", seconds: 120) {
                try await calls(stack.simulator).contains("StopNotify")
            }
            expectTrue(stalled.readUntilClosed() < Int(count), "the stalled peer was not dropped")
            let before = log.values(of: id).count
            _ = try await stack.simulator.notifyMany("AA:BB:CC:DD:EE:01/2a19", [42], count: 2)
            try await waitUntil("the reader's values") { log.values(of: id).count >= before + 2 }
            expectEqual(log.states(of: id), [.connected])
            _ = try await stack.client.call(DeviceUnwatch.self, WatchReference(watch: id))
            try await waitUntil("the disconnect") { try await calls(stack.simulator).contains("Disconnect") }
            try await expectEqual(
                calls(stack.simulator),
                ["Connect", "StartNotify", "StartNotify", "StopNotify", "StopNotify", "Disconnect"])
        }
    }

    // MARK: - Chains on a watched device

    @Test func chainsOnAWatchedDeviceUseItsLinkAndLeaveItUp() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickNotifications) { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.battery])
            try await waitUntil("values") { log.values(of: id).count >= 2 }
            let result = try await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [
                        .connect(timeoutMs: nil), .read(characteristic: Self.temperature, timeoutMs: nil),
                        .notify(characteristic: Self.battery, count: 2, timeoutMs: nil), .disconnect,
                    ])
            ).get()
            expectEqual(result.run.results[1].number, 21.5)
            expectEqual(result.run.results[1].unit, "°C")
            expectEqual(result.run.results[2].numbers?.count, 2)
            expectEqual(result.run.results[0].mtu, 247)
            // A failing chain does not disconnect the watched device either.
            try await stack.simulator.fail(
                "AA:BB:CC:DD:EE:01/2a6e", "ReadValue", with: "org.bluez.Error.Failed", message: "boom")
            let failed = await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [.connect(timeoutMs: nil), .read(characteristic: Self.temperature, timeoutMs: nil)]))
            expectEqual(failed.failureCode, .deviceError)
            let before = log.values(of: id).count
            try await waitUntil("values after the chains") { log.values(of: id).count >= before + 2 }
            try await expectEqual(
                calls(stack.simulator), ["Connect", "StartNotify", "Connect", "ReadValue", "Connect", "ReadValue"])
            expectEqual(log.states(of: id), [.connected])
        }
    }

    @Test func aChainsReadOfAWatchedCharacteristicIsNoValueAndEveryNotificationIsOne() async throws {
        // Reads that take a while, so that notifications arrive while one is on its way.
        try await withSimulatedStack(simulatorOptions: ["--timing", "gatt_ms=3"]) { stack in
            let log = WatchEventLog(stack.client)
            defer { log.dispose() }
            let id = try await watch(stack.client, [Self.echoOut])
            try await waitUntil("connected") { log.states(of: id) == [.connected] }
            let count: UInt32 = 150
            try await stack.simulator.startStream(Self.echoOutTarget, intervalMs: 4, count: count)
            try await waitUntil("the stream's first value") { !log.values(of: id).isEmpty }
            // BlueZ signals each read's value exactly as it signals a notification (PropertiesChanged of Value),
            // here the last value notified: a watch must not show it again.
            var reads: [Data] = []
            for _ in 0..<5 {
                let result = try await stack.service.run(
                    RunParams(
                        address: Self.first,
                        steps: [.connect(timeoutMs: nil)]
                            + Array(repeating: .read(characteristic: Self.echoOut, timeoutMs: nil), count: 6))
                ).get()
                reads += result.run.results.dropFirst().compactMap(\.value)
            }
            try await waitUntil("the stream's end") {
                try await stack.simulator.streamDeliveries(Self.echoOutTarget).count == Int(count)
            }
            try await waitUntil("every value") { log.values(of: id).count >= Int(count) }
            try await Task.sleep(for: .milliseconds(100))
            expectEqual(log.values(of: id).map { Self.sequence($0.value) }, Array(0..<count))
            // The reads did read streamed values while the stream was on.
            expectEqual(reads.count, 30)
            expectTrue(reads.allSatisfy { $0.count == 12 }, "\(reads)")
            try await expectEqual(stack.simulator.countCalls(Self.first.string, "ReadValue"), 30)
            expectEqual(log.states(of: id), [.connected])
        }
    }

    // MARK: - --watch

    @Test func serviceWatchesAreRecordedIntoTheStore() async throws {
        try await withSimulatedStack(
            simulatorOptions: Self.quickNotifications,
            serviceArguments: ["--watch", "AA:BB:CC:DD:EE:01=2a19,2a6e"]
        ) { stack in
            let store = try await StoreServiceProcess.start(
                socketPath: stack.simulator.directory + "/store.sock",
                databasePath: stack.simulator.directory + "/store.sqlite")
            defer { Task { await store.stop() } }
            try await waitUntil("recorded readings of both characteristics") {
                let readings = try await store.objects(of: "Reading")
                return Set(readings.compactMap { $0.values["characteristic"]?.stringValue }) == ["2a19", "2a6e"]
            }
            let readings = try await store.objects(of: "Reading")
            let battery = readings.filter { $0.values["characteristic"] == .string("2a19") }
            expectTrue(battery.allSatisfy { $0.values["unit"] == .string("%") && $0.values["number"] != .null })
            let temperature = readings.filter { $0.values["characteristic"] == .string("2a6e") }
            expectTrue(temperature.allSatisfy { $0.values["unit"] == .string("°C") })
            let devices = try await store.objects(of: "Device")
            expectEqual(devices.map { $0.values["address"] }, [.string("AA:BB:CC:DD:EE:01")])
            expectEqual(devices.first?.values["connected"], .bool(true))
        }
    }

    @Test(arguments: [
        ("AA:BB:CC=2a19", "a Bluetooth address like AA:BB:CC:DD:EE:01 before '='"),
        ("AA:BB:CC:DD:EE:01=2a1", "characteristic UUIDs after '=', not '2a1'"),
        ("AA:BB:CC:DD:EE:01", "ADDRESS=UUID[,UUID…]"),
    ])
    func aBadWatchFlagExits64WithTheReason(value: String, reason: String) async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = try TestProcess(
            executable: DeviceServiceProcess.executablePath,
            arguments: ["--socket", directory + "/device.sock", "--watch", value], lifetimeSeconds: nil,
            standardErrorPath: directory + "/stderr")
        let exited = try await offThePool { process.waitForExit() }
        expectTrue(exited)
        expectEqual(process.exitStatus, 64)
        let stderr = (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? ""
        expectTrue(stderr.contains("--watch '\(value)'") && stderr.contains(reason), "\(stderr)")
    }
}

extension Result where Failure == RPCError {
    /// The error code, when it failed.
    var failureCode: RPCErrorCode? {
        guard case .failure(let error) = self else { return nil }
        return error.code
    }
}
