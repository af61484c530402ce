import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusDBus
@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// `device.discover`, `device.services`, descriptor steps and the `adapter` field against the simulated BlueZ.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceDiscoveryTests {
    static let first = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let bthomeSensor = BluetoothAddress("AA:BB:CC:DD:EE:05")!
    static let bthome = "0000fcd2-0000-1000-8000-00805f9b34fb"
    static let echoOut = BluetoothUUID("c0defeed-0002-4000-8000-000000000000")!
    /// Advertisements every 30 ms, devices found at once.
    static let quickAdvertising = ["--timing", "rssi_ms=30", "--timing", "discovery_ms=0"]

    /// Collects `device.advertisement` and `device.discoveryEnded` events.
    final class Advertisements: Sendable {
        let events = Locked([AdvertisementEvent]())
        let ended = Locked([DiscoveryEndedEvent]())
        let observations: [any Disposable]

        init(_ client: BusClient) {
            let events = events
            let ended = ended
            observations = [
                client.events(AdvertisementEvent.self).startWithValues { event in events.withLock { $0.append(event) }
                },
                client.events(DiscoveryEndedEvent.self).startWithValues { event in ended.withLock { $0.append(event) }
                },
            ]
        }

        func of(_ address: BluetoothAddress) -> [AdvertisementEvent] {
            events.withLock { $0 }.filter { $0.address == address }
        }

        func dispose() { for observation in observations { observation.dispose() } }
    }

    func methods(_ simulator: BlueZSimulator, path: String = "/org/bluez/hci0") async throws -> [String] {
        try await simulator.callLog().filter { $0.path == path }.map(\.method)
    }

    @Test func aDiscoveryStreamsTheBTHomeSensorsDecodedValuesThroughItsFilter() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickAdvertising) { stack in
            let heard = Advertisements(stack.client)
            defer { heard.dispose() }
            let discovery = try await stack.client.call(
                DeviceDiscover.self, DiscoverParams(uuids: [BluetoothUUID("fcd2")!], rssi: -90)
            ).discovery
            try await waitUntil("three advertisements") { heard.of(Self.bthomeSensor).count >= 3 }
            let counts = try await stack.client.call(DeviceUndiscover.self, DiscoveryReference(discovery: discovery))
            let events = heard.events.withLock { $0 }
            expectTrue(events.allSatisfy { $0.address == Self.bthomeSensor && $0.discovery == discovery })
            let first = try #require(events.first)
            expectEqual(first.name, "BTHome-5")
            expectEqual(first.rssi <= -60 && first.rssi >= -70, true)
            expectEqual(first.serviceData.keys.sorted(), [Self.bthome])
            expectEqual(first.decoded.map(\.name), ["battery", "temperature", "humidity"])
            expectEqual(first.decoded.map(\.unit), ["%", "°C", "%"])
            expectTrue(events.allSatisfy { abs($0.decoded[1].number - 21.5) <= 0.1001 && $0.decoded[0].number == 93 })
            // Without duplicates, every event advertises something new (here: a new BTHome packet id).
            expectEqual(Set(events.map { $0.serviceData[Self.bthome] }).count, events.count)
            expectEqual(counts.advertisements, events.count)
            expectEqual(counts.skipped, 0)
            try await waitUntil("StopDiscovery") { try await methods(stack.simulator).contains("StopDiscovery") }
            try await expectEqual(methods(stack.simulator), ["SetDiscoveryFilter", "StartDiscovery", "StopDiscovery"])
            // The filter BlueZ got: the service-data UUID, the RSSI threshold, LE only (entries sorted by key).
            let filter = try await stack.simulator.callLog().first { $0.method == "SetDiscoveryFilter" }
            expectEqual(filter?.arguments, "{RSSI: -90, Transport: le, UUIDs: [\(Self.bthome)]}")
        }
    }

    @Test func aDiscoveryWithoutAnRSSIHearsOnlyDevicesAtMinus90DBmOrStronger() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickAdvertising) { stack in
            let heard = Advertisements(stack.client)
            defer { heard.dispose() }
            let other = try await stack.service.makeClient(name: "any")
            defer { other.close() }
            let heardAny = Advertisements(other)
            defer { heardAny.dispose() }
            let discovery = try await stack.client.call(DeviceDiscover.self, DiscoverParams(duplicates: true))
                .discovery
            try await waitUntil("Thermo-1 heard") { !heard.of(Self.first).isEmpty }
            try await waitUntil("the default filter sent") {
                try await stack.simulator.callLog().contains { $0.method == "SetDiscoveryFilter" }
            }
            let sent = try await stack.simulator.callLog().filter { $0.method == "SetDiscoveryFilter" }
            expectEqual(sent.map(\.arguments), ["{DuplicateData: true, RSSI: -90, Transport: le}"])
            // A second session asking for any RSSI (-127): BlueZ gets the weaker threshold of the two.
            _ = try await other.call(DeviceDiscover.self, DiscoverParams(rssi: -127, duplicates: true))
            try await waitUntil("the merged filter sent") {
                try await stack.simulator.callLog().filter { $0.method == "SetDiscoveryFilter" }.count == 2
            }
            try await expectEqual(
                stack.simulator.callLog().filter { $0.method == "SetDiscoveryFilter" }.last?.arguments,
                "{DuplicateData: true, RSSI: -127, Transport: le}")
            // Thermo-1 heard faintly: only the session at -127 reports it.
            let before = heardAny.of(Self.first).count
            try await stack.simulator.setDeviceProperty(Self.first.string, "RSSI", .int16(-95))
            try await waitUntil("the faint report") {
                heardAny.of(Self.first).dropFirst(before).contains { $0.rssi == -95 }
            }
            // Then a report the first session does hear: everything it was sent before has arrived by then.
            try await stack.simulator.setDeviceProperty(Self.first.string, "RSSI", .int16(-77))
            try await waitUntil("the marker report") { heard.of(Self.first).contains { $0.rssi == -77 } }
            expectTrue(heard.of(Self.first).allSatisfy { $0.rssi >= -90 }, "\(heard.of(Self.first).map(\.rssi))")
            let counts = try await stack.client.call(DeviceUndiscover.self, DiscoveryReference(discovery: discovery))
            expectEqual(counts.advertisements, heard.events.withLock { $0 }.count)
        }
    }

    @Test func withoutDuplicatesAnUnchangedDeviceIsOneEventAndWithThemEveryReport() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickAdvertising) { stack in
            let heard = Advertisements(stack.client)
            defer { heard.dispose() }
            let other = try await stack.service.makeClient(name: "duplicates")
            defer { other.close() }
            let heardAll = Advertisements(other)
            defer { heardAll.dispose() }
            _ = try await stack.client.call(DeviceDiscover.self, DiscoverParams())
            _ = try await other.call(DeviceDiscover.self, DiscoverParams(duplicates: true))
            try await waitUntil("five reports of Thermo-1") { heardAll.of(Self.first).count >= 5 }
            expectEqual(heard.of(Self.first).count, 1)
            expectEqual(heard.of(Self.first).first?.manufacturerData, ["ffff": Data([1, 2])])
            // Tag-4's manufacturer data counts up: each of its advertisements is an event even without duplicates.
            try await waitUntil("Tag-4 three times") { heard.of(BluetoothAddress("AA:BB:CC:DD:EE:04")!).count >= 3 }
            // One BlueZ session for both, started once.
            try await expectEqual(
                methods(stack.simulator).filter { $0 == "StartDiscovery" }, ["StartDiscovery"])
        }
    }

    @Test func malformedAdvertisedDataIsSkippedAndCountedNeverACrash() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickAdvertising) { stack in
            let heard = Advertisements(stack.client)
            defer { heard.dispose() }
            let discovery = try await stack.client.call(DeviceDiscover.self, DiscoverParams()).discovery
            try await waitUntil("Thermo-1 heard") { !heard.of(Self.first).isEmpty }
            let address = Self.first.string
            for payload: [UInt8] in [
                [0x40, 0x02, 0xCA],  // a temperature cut short
                [0x41, 0x02, 0xCA, 0x09],  // encrypted
                [0x40, 0x01, 0x50, 0x7F, 0x01],  // battery, then an object id BTHome does not define
            ] {
                let before = heard.of(Self.first).count
                try await stack.simulator.setServiceData(address, "fcd2", payload)
                try await waitUntil("the event") { heard.of(Self.first).count > before }
            }
            let before = heard.of(Self.first).count
            try await stack.simulator.setDeviceProperty(
                address, "ManufacturerData",
                .dictionary(key: .uint16, value: .variant, [DBusDictionaryEntry(.uint16(1), .variant(.string("x")))]))
            try await waitUntil("the event") { heard.of(Self.first).count > before }
            let events = heard.of(Self.first)
            expectEqual(events.suffix(4).map(\.decoded.count), [0, 0, 1, 1])
            expectEqual(events.last?.manufacturerData, [:])
            let counts = try await stack.client.call(DeviceUndiscover.self, DiscoveryReference(discovery: discovery))
            expectEqual(counts.skipped, 5)  // three payloads, then the last one again beside the malformed data
            _ = try await stack.client.call(DeviceList.self, ListParams())
        }
    }

    @Test func recordTrueSavesEachDecodedValueOncePerAdvertisedPayload() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickAdvertising) { stack in
            let store = try await StoreServiceProcess.start(
                socketPath: stack.simulator.directory + "/store.sock",
                databasePath: stack.simulator.directory + "/store.sqlite")
            defer { Task { await store.stop() } }
            let heard = Advertisements(stack.client)
            defer { heard.dispose() }
            // A fixed payload reported again and again (duplicates): recorded once.
            try await stack.simulator.setServiceData(Self.first.string, "fcd2", [0x40, 0x01, 0x57, 0x02, 0x66, 0x08])
            _ = try await stack.client.call(
                DeviceDiscover.self, DiscoverParams(uuids: [BluetoothUUID("fcd2")!], duplicates: true, record: true))
            try await waitUntil("five reports of Thermo-1") { heard.of(Self.first).count >= 5 }
            try await waitUntil("BTHome-5's readings") {
                try await store.objects(of: "Reading").count >= 6
            }
            try await Task.sleep(for: .milliseconds(400))
            let readings = try await store.objects(of: "Reading")
            let fixed = Data([0x40, 0x01, 0x57, 0x02, 0x66, 0x08]).base64EncodedString()
            let thermo = readings.filter { $0.values["value"] == .string(fixed) }
            expectEqual(
                thermo.compactMap { $0.values["characteristic"]?.stringValue }.sorted(),
                ["fcd2/battery", "fcd2/temperature"])
            expectEqual(
                thermo.compactMap { $0.values["number"]?.doubleValue }.sorted(), [21.5, 87])
            let names = Set(readings.compactMap { $0.values["characteristic"]?.stringValue })
            expectEqual(names, ["fcd2/battery", "fcd2/temperature", "fcd2/humidity"])
            let devices = try await store.objects(of: "Device").compactMap { $0.values["address"]?.stringValue }
            expectEqual(Set(devices), ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:05"])
        }
    }

    // MARK: - GATT database, descriptors, adapters

    @Test func servicesListTheGATTDatabaseAndDescriptorStepsReadAndWrite() async throws {
        try await withSimulatedStack(simulatorOptions: Self.quickAdvertising) { stack in
            let services = try await stack.client.call(DeviceServices.self, ServicesParams(address: Self.first))
                .services
            expectEqual(
                services.map { DeviceCommandsShortForm.short($0.uuid) },
                ["180f", "181a", "180a", "c0defeed-0000-4000-8000-000000000000"])
            let battery = services[0].characteristics[0]
            expectEqual(battery.flags, ["read", "notify"])
            expectEqual(battery.descriptors.map { DeviceCommandsShortForm.short($0) }, ["2902"])
            let echoOut = try #require(services[3].characteristics.first { $0.uuid.matches(Self.echoOut) })
            expectEqual(echoOut.descriptors.map { DeviceCommandsShortForm.short($0) }, ["2902", "2901"])
            let description = BluetoothUUID("2901")!
            let result = try await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [
                        .connect(timeoutMs: nil),
                        .readDescriptor(characteristic: Self.echoOut, descriptor: description, timeoutMs: nil),
                        .writeDescriptor(
                            characteristic: Self.echoOut, descriptor: description, value: Data("renamed".utf8),
                            timeoutMs: nil),
                        .readDescriptor(characteristic: Self.echoOut, descriptor: description, timeoutMs: nil),
                        .readDescriptor(
                            characteristic: BluetoothUUID("2a19")!, descriptor: BluetoothUUID("2902")!, timeoutMs: nil),
                        .disconnect,
                    ])
            ).get()
            expectEqual(
                result.run.results.map(\.value),
                [nil, Data("Echo output".utf8), nil, Data("renamed".utf8), Data([0, 0]), nil])
            // A descriptor the characteristic does not have: 404 at its step, and the chain still disconnects.
            let missing = await stack.service.run(
                RunParams(
                    address: Self.first,
                    steps: [
                        .connect(timeoutMs: nil),
                        .readDescriptor(
                            characteristic: BluetoothUUID("2a19")!, descriptor: description, timeoutMs: nil),
                    ]))
            guard case .failure(let error) = missing else {
                Issue.record("the chain succeeded")
                return
            }
            expectEqual(error.code, .notFound)
            expectEqual(error.chainFailure?.step, 1)
            // Unknown devices and adapters; a device BlueZ knows but never connected has no services yet (503).
            try await expectCode(.notFound) {
                _ = try await stack.client.call(
                    DeviceServices.self, ServicesParams(address: BluetoothAddress("AA:BB:CC:DD:EE:09")!))
            }
            try await expectCode(.notFound) {
                _ = try await stack.client.call(
                    DeviceServices.self, ServicesParams(address: Self.first, adapter: "hci9"))
            }
            try await expectCode(.notFound) {
                _ = try await stack.client.call(DeviceDiscover.self, DiscoverParams(adapter: "hci9"))
            }
            try await expectCode(.notFound) {
                _ = try await stack.client.call(
                    DeviceRecordedRun.self, RunParams(address: Self.first, steps: [.disconnect], adapter: "hci9"))
            }
            let heard = Advertisements(stack.client)
            defer { heard.dispose() }
            let discovery = try await stack.client.call(DeviceDiscover.self, DiscoverParams(seconds: 0.3)).discovery
            try await waitUntil("the discovery's end") { !heard.ended.withLock { $0 }.isEmpty }
            expectEqual(heard.ended.withLock { $0 }.first?.discovery, discovery)
            await #expect(throws: RPCError.self) {
                _ = try await stack.client.call(DeviceUndiscover.self, DiscoveryReference(discovery: discovery))
            }
            do {
                _ = try await stack.client.call(
                    DeviceServices.self, ServicesParams(address: BluetoothAddress("AA:BB:CC:DD:EE:04")!))
                Issue.record("Tag-4's services were listed before it ever connected")
            } catch let error as RPCError {
                expectEqual(error.code, .unavailable)
            }
        }
    }
}

/// Expects `body` to fail with an `RPCError` of `code`.
func expectCode(
    _ code: RPCErrorCode, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async throws {
    do {
        try await body()
        Issue.record("succeeded, expected \(code)", sourceLocation: sourceLocation)
    } catch let error as RPCError {
        expectEqual(error.code, code, sourceLocation: sourceLocation)
    }
}

/// `180f` for a UUID on the Bluetooth base UUID.
enum DeviceCommandsShortForm {
    static func short(_ uuid: BluetoothUUID) -> String { AdvertisedData.shortForm(uuid.canonical) }
}
