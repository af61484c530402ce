import EntityFixtures
import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph

/// Generated types over `RemoteStore` against a real `storesvc`: the default model's `Device` and `Reading` as the
/// service serves them, and the every-shape model served with `--model`, written by one client and read back by
/// another.
struct TypedEntitiesRemoteStoreTests {
    @Test func theDefaultModelsTypesRoundTripThroughStoresvc() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let writer = contexts.writer
        try await onThread {
            try writer.performAndWait {
                let device = writer.insert(Device.self)
                device.address = "AA:01"
                device.name = "thermo"
                device.lastSeen = Date(timeIntervalSince1970: 1_000)
                for (second, level) in [(1, 87), (2, 86)] {
                    let reading = writer.insert(Reading.self)
                    reading.characteristic = "2a19"
                    reading.value = Data([UInt8(level)])
                    reading.time = Date(timeIntervalSince1970: Double(second))
                    reading.number = Double(level)
                    reading.unit = "%"
                    reading.device = device
                }
                try writer.save()
            }
        }
        let reader = contexts.reader
        let read = try await onThread {
            try reader.performAndWait { () throws -> [String] in
                let device = try #require(try Device.find(address: "AA:01", in: reader))
                let readings = try reader.fetch(
                    Reading.fetchRequest(where: "device == $d", ["d": .reference(device.objectID)], sortedBy: [.time]))
                return ["\(device.name ?? "-") \(device.connected) \(device.lastSeen?.timeIntervalSince1970 ?? 0)"]
                    + readings.map { "\($0.number ?? 0)\($0.unit ?? "") \($0.value.first ?? 0) \($0.device == device)" }
                    + ["\(device.readings.count)"]
            }
        }
        expectEqual(read, ["thermo false 1000.0", "87.0% 87 true", "86.0% 86 true", "2"])
    }

    @Test func aTypedLiveQueryOverARemoteStoreFollowsAnotherClientsSaves() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let query = try TypedLiveQuery(
            try Device.fetchRequest(where: "connected == YES", sortedBy: [.address]), in: contexts.reader)
        let seen = Locked<[[String]]>([])
        let disposable = query.updates.startWithValues { update in
            seen.withLock { $0.append(update.objects.map(\.address)) }
        }
        defer { disposable.dispose() }
        let started = try await eventuallyAsync { seen.withLock { $0 } == [[]] }
        expectTrue(started)
        let writer = contexts.writer
        try await onThread {
            try writer.performAndWait {
                for (address, connected) in [("AA:02", true), ("AA:01", true), ("AA:03", false)] {
                    let device = writer.insert(Device.self)
                    device.address = address
                    device.connected = connected
                }
                try writer.save()
            }
        }
        let followed = try await eventuallyAsync { seen.withLock { $0.last } == ["AA:01", "AA:02"] }
        expectTrue(followed, "\(seen.withLock { $0 })")
    }

    @Test func everyAttributeTypeAndRelationshipShapeRoundTripsThroughStoresvcWithItsModelFile() async throws {
        let service = try await onThread {
            try StoreServiceProcess.start(arguments: ["--model", EveryShapeFixture.modelURL.path])
        }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        expectEqual(contexts.writerStore.model, try EveryShapeFixture.model())
        let writer = contexts.writer
        let written = try await onThread {
            try writer.performAndWait {
                let samples = EveryShapeFixture.insertGraph(in: writer)
                try writer.save()
                return samples.map(EveryShapeFixture.describe)
            }
        }
        let reader = contexts.reader
        let read = try await onThread {
            try reader.performAndWait {
                try reader.fetch(Sample.fetchRequest(sortedBy: [.text.descending])).map(EveryShapeFixture.describe)
            }
        }
        expectEqual(read, written)
        let found = try await onThread {
            try reader.performAndWait { try Sample.find(token: EveryShapeFixture.fullToken, in: reader)?.maybeText }
        }
        expectEqual(found, "maybe")
    }
}
