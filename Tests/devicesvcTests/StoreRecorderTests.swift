import BusProtocol
import Foundation
import Shared
import Testing

@testable import devicesvc

@Suite struct StoreRecorderTests {
    static let address = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let time = Date(timeIntervalSince1970: 1_800_000_000)

    func makeRecording(chain: String = "c-1") -> ChainRecording {
        ChainRecording(
            chain: chain, address: Self.address, name: "Thermo-1", connected: false, lastSeen: Self.time,
            readings: [
                .init(characteristic: "2a19", value: Data([87]), time: Self.time),
                .init(characteristic: "2a19", value: Data([86]), time: Self.time),
            ])
    }

    @Test func aNewDeviceIsInsertedAndEveryReadingPointsAtIt() {
        let save = makeRecording().saveParams(existingDevice: nil)
        #expect(save.inserts.map(\.entity) == ["Device", "Reading", "Reading"])
        #expect(save.inserts[0].ref == "device")
        #expect(save.inserts[0].values["address"] == .string("AA:BB:CC:DD:EE:01"))
        #expect(save.inserts[0].values["name"] == .string("Thermo-1"))
        #expect(save.inserts[1].values["device"] == .string("device"))
        #expect(save.inserts[1].values["value"] == .string(Data([87]).base64EncodedString()))
        #expect(save.inserts[2].values["chain"] == .string("c-1"))
        #expect(save.inserts[1].values["characteristic"] == .string("2a19"))
        #expect(save.updates.isEmpty)
    }

    @Test func aKnownDeviceIsUpdatedWithoutAVersionCheck() {
        let device = ObjectID(entity: "Device", number: 7)
        let save = makeRecording().saveParams(existingDevice: device)
        #expect(save.updates.map(\.id) == [device])
        #expect(save.updates.first?.version == nil)
        #expect(save.inserts.map(\.entity) == ["Reading", "Reading"])
        #expect(save.inserts[0].values["device"] == .string("Device/7"))
    }

    @Test func progressAddsReadValuesAndNotificationsButNothingElse() {
        var recording = ChainRecording(
            chain: "c-1", address: Self.address, name: nil, connected: false, lastSeen: Self.time, readings: [])
        let steps: [ChainStep] = [
            .connect(timeoutMs: nil), .read(characteristic: BluetoothUUID("2A19")!, timeoutMs: nil),
            .notify(characteristic: BluetoothUUID("2a37")!, count: 1, timeoutMs: nil),
        ]
        recording.add(.finished(StepResult(step: 0, operation: .connect)), steps: steps, at: Self.time)
        recording.add(.finished(StepResult(step: 1, operation: .read, value: Data([1]))), steps: steps, at: Self.time)
        recording.add(.notification(step: 2, value: Data([2])), steps: steps, at: Self.time)
        recording.add(
            .finished(StepResult(step: 2, operation: .notify, values: [Data([2])])), steps: steps, at: Self.time)
        #expect(recording.readings.map(\.characteristic) == ["2A19", "2a37"])
        #expect(recording.readings.map(\.value) == [Data([1]), Data([2])])
    }

    @Test func savesOverTheBusAndRemembersTheDevice() async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try FakeStoreService(socketPath: directory + "/store.sock")
        let recorder = StoreRecorder(socketPath: directory + "/store.sock")
        #expect(await recorder.record(makeRecording(chain: "c-1")) == nil)
        #expect(await recorder.record(makeRecording(chain: "c-2")) == nil)
        await recorder.close()
        await store.stop()
        #expect(store.fetches.count == 1)
        #expect(store.fetches.first?.arguments == ["address": .string("AA:BB:CC:DD:EE:01")])
        #expect(store.saves.count == 2)
        #expect(store.saves[0].inserts.first?.entity == "Device")
        #expect(store.saves[1].updates.map(\.id) == [ObjectID(entity: "Device", number: 1)])
        #expect(store.saves[1].inserts.allSatisfy { $0.values["device"] == .string("Device/1") })
    }

    @Test func anUnreachableStoreIsReportedNotThrown() async {
        let recorder = StoreRecorder(socketPath: makeTemporaryDirectory() + "/nobody.sock")
        let failure = await recorder.record(makeRecording())
        #expect(failure?.contains("nobody.sock") == true)
    }
}
