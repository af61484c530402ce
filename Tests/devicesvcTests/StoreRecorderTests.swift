import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph
@testable import ContextBusWire
@testable import devicesvc

struct StoreRecorderTests {
    static let address = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let time = Date(timeIntervalSince1970: 1_800_000_000)

    func makeRecording(chain: String = "c-1", connected: Bool = false) -> ChainRecording {
        ChainRecording(
            chain: chain, address: Self.address, name: "Thermo-1", connected: connected, lastSeen: Self.time,
            readings: [
                .init(
                    characteristic: "2a19", value: Data([87]), time: Self.time,
                    measurement: Quantity(number: 87, unit: "%"), chain: chain),
                .init(characteristic: "2a19", value: Data([86]), time: Self.time, chain: chain),
            ])
    }

    /// Inserts `recording` into a context on `store` and saves it, as `StoreRecorder` does (merge policy
    /// `objectTrump`: the device is an upsert by address).
    func save(_ recording: ChainRecording, into store: any PersistentStore) throws {
        let context = ObjectContext(store: store, name: "devicesvc")
        context.mergePolicy = .objectTrump
        try context.performAndWait {
            recording.insert(into: context)
            try context.save()
        }
    }

    /// Every object of `entity` in `store`, oldest first.
    func snapshots(of entity: String, in store: any PersistentStore) throws -> [ObjectSnapshot] {
        guard case .objects(let objects) = try store.fetch(FetchRequest(entity: entity)).content else { return [] }
        return objects
    }

    // MARK: - The objects a recording makes

    @Test func aNewDeviceIsInsertedAndEveryReadingPointsAtIt() throws {
        let store = InMemoryStore(model: .deviceReadings)
        try save(makeRecording(), into: store)
        let devices = try snapshots(of: "Device", in: store)
        expectEqual(devices.count, 1)
        let device = try #require(devices.first)
        expectEqual(device.values["address"], .string("AA:BB:CC:DD:EE:01"))
        expectEqual(device.values["name"], .string("Thermo-1"))
        expectEqual(device.values["connected"], .bool(false))
        expectEqual(device.values["lastSeen"], .date(Self.time))
        let readings = try snapshots(of: "Reading", in: store)
        expectEqual(readings.map { $0.values["value"] }, [.binary(Data([87])), .binary(Data([86]))])
        expectTrue(readings.allSatisfy { $0.values["device"] == .reference(device.id) })
        expectTrue(readings.allSatisfy { $0.values["chain"] == .string("c-1") })
        expectTrue(readings.allSatisfy { $0.values["characteristic"] == .string("2a19") })
        expectEqual(readings.map { $0.values["number"] }, [.double(87), .null])
        expectEqual(readings.map { $0.values["unit"] }, [.string("%"), .null])
    }

    @Test func aKnownDeviceIsUpdatedNotInsertedAgain() throws {
        let store = InMemoryStore(model: .deviceReadings)
        try save(makeRecording(chain: "c-1"), into: store)
        try save(makeRecording(chain: "c-2", connected: true), into: store)
        let devices = try snapshots(of: "Device", in: store)
        expectEqual(devices.count, 1)
        expectEqual(devices.first?.values["connected"], .bool(true))
        expectEqual(devices.first?.version, 2)
        let readings = try snapshots(of: "Reading", in: store)
        expectEqual(readings.count, 4)
        expectTrue(readings.allSatisfy { $0.values["device"] == devices.first.map { .reference($0.id) } })
    }

    @Test func progressAddsReadValuesAndNotificationsButNothingElse() {
        var recording = ChainRecording(
            chain: "c-1", address: Self.address, name: nil, connected: false, lastSeen: Self.time, readings: [])
        let steps: [ChainStep] = [
            .connect(timeoutMs: nil), .read(characteristic: BluetoothUUID("2A19")!, timeoutMs: nil),
            .notify(characteristic: BluetoothUUID("2a37")!, count: 1, timeoutMs: nil),
        ]
        recording.add(.finished(StepResult(step: 0, operation: .connect)), steps: steps, at: Self.time)
        recording.add(
            .finished(StepResult(step: 1, operation: .read, value: Data([1]), number: 1, unit: "%")), steps: steps,
            at: Self.time)
        recording.add(
            .notification(step: 2, value: Data([0, 72]), measurement: Quantity(number: 72, unit: "bpm")),
            steps: steps, at: Self.time)
        recording.add(
            .finished(StepResult(step: 2, operation: .notify, values: [Data([0, 72])])), steps: steps, at: Self.time)
        expectEqual(recording.readings.map(\.characteristic), ["2A19", "2a37"])
        expectEqual(recording.readings.map(\.value), [Data([1]), Data([0, 72])])
        expectEqual(
            recording.readings.map(\.measurement),
            [Quantity(number: 1, unit: "%"), Quantity(number: 72, unit: "bpm")])
        expectEqual(recording.readings.map(\.chain), ["c-1", "c-1"])
    }

    // MARK: - Through a RemoteStore to the real storesvc

    @Test func recordsThroughARemoteStoreIntoTheStoreServiceWithoutSubscribing() async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try await StoreServiceProcess.start(
            socketPath: directory + "/store.sock", databasePath: directory + "/store.sqlite")
        let recorder = StoreRecorder(socketPath: service.socketPath)
        do {
            #expect(await recorder.record(makeRecording(chain: "c-1")) == nil)
            #expect(await recorder.record(makeRecording(chain: "c-2", connected: true)) == nil)
            // The recorder's connection is open, and it holds no subscription.
            let stats = try await service.stats()
            expectGreaterThanOrEqual(stats.connections, 2)
            expectEqual(stats.subscriptions, 0)
            expectEqual(stats.saves, 2)
            let devices = try await service.objects(of: "Device")
            expectEqual(devices.count, 1)
            expectEqual(devices.first?.values["connected"], .bool(true))
            let readings = try await service.objects(of: "Reading")
            expectEqual(readings.compactMap { $0.values["chain"]?.stringValue }, ["c-1", "c-1", "c-2", "c-2"])
            expectTrue(readings.allSatisfy { $0.values["device"] == devices.first.map { .string($0.id.description) } })
        } catch {
            await recorder.close()
            await service.stop()
            throw error
        }
        await recorder.close()
        await service.stop()
    }

    @Test func aRecordingIsOneSaveThatUpsertsTheDeviceByItsAddress() async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let service = try await StoreServiceProcess.start(
            socketPath: directory + "/store.sock", databasePath: directory + "/store.sqlite")
        let recorder = StoreRecorder(socketPath: service.socketPath)
        do {
            #expect(await recorder.record(makeRecording(chain: "c-1")) == nil)
            // A store opened as the recorder opens it, and a recording saved as the recorder saves it.
            let store = try await RemoteStore.open(
                socketPath: service.socketPath,
                options: RemoteStore.Options(clientName: "devicesvc", reconnect: nil, changeStream: .off))
            defer { store.close() }
            let context = ObjectContext(store: store, name: "devicesvc")
            context.mergePolicy = .objectTrump
            let sent = store.client.requestsSent
            let device = try await context.perform { () throws -> ObjectID in
                makeRecording(chain: "c-2").insert(into: context)
                let device = try #require(context.registeredObjects.first { $0.entity.name == "Device" })
                try context.save()
                return device.objectID
            }
            // One round trip: the save, no fetch of the device first.
            expectEqual(store.client.requestsSent, sent + 1)
            // The insert became the device recorded before (one Device per address), and is registered as it.
            let devices = try await context.perform { () throws -> [ObjectID] in
                try context.fetchIDs(FetchRequest(entity: "Device"))
            }
            expectEqual(devices, [device])
            let chains = try await context.perform { () throws -> [String?] in
                try context.existingObject(with: device).relatedObjects(forKey: "readings").map { $0.string("chain") }
            }
            expectEqual(chains.sorted { ($0 ?? "") < ($1 ?? "") }, ["c-1", "c-1", "c-2", "c-2"])
        } catch {
            await recorder.close()
            await service.stop()
            throw error
        }
        await recorder.close()
        await service.stop()
    }

    @Test func aStoreThatGoesAwayFailsTheRecordingAndTheNextOneConnectsAgain() async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/store.sock"
        let databasePath = directory + "/store.sqlite"
        let first = try await StoreServiceProcess.start(socketPath: socketPath, databasePath: databasePath)
        let recorder = StoreRecorder(socketPath: socketPath)
        #expect(await recorder.record(makeRecording(chain: "c-1")) == nil)
        // SIGKILL: the acknowledged (durable) recording must survive it.
        await first.crash()
        let failure = await recorder.record(makeRecording(chain: "c-2"))
        expectEqual(failure?.isEmpty, false)
        let second = try await StoreServiceProcess.start(socketPath: socketPath, databasePath: databasePath)
        do {
            #expect(await recorder.record(makeRecording(chain: "c-3")) == nil)
            let readings = try await second.objects(of: "Reading")
            expectEqual(readings.compactMap { $0.values["chain"]?.stringValue }, ["c-1", "c-1", "c-3", "c-3"])
            try await expectEqual(second.objects(of: "Device").count, 1)
        } catch {
            await recorder.close()
            await second.stop()
            throw error
        }
        await recorder.close()
        await second.stop()
    }

    @Test func anUnreachableStoreIsReportedNotThrown() async {
        let recorder = StoreRecorder(socketPath: makeTemporaryDirectory() + "/nobody.sock")
        let failure = await recorder.record(makeRecording())
        expectEqual(failure?.contains("nobody.sock"), true)
    }
}
