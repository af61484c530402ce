import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph

/// `RemoteStore` against the real `storesvc` process: contexts in "different processes" (each with its own
/// store and connection) sharing one service.
struct RemoteStoreTests {
    @Test func aContextOnARemoteStoreInsertsSavesAndFetchesWithPredicates() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        expectEqual(store.model, .deviceReadings)
        let context = ObjectContext(store: store, name: "writer")
        let found = try await onThread {
            try context.performAndWait { () throws -> [String] in
                let device = context.insert(entity: "Device")
                device["address", as: String.self] = "AA:01"
                device["name", as: String.self] = "thermometer"
                for value in 1...5 {
                    let reading = context.insert(entity: "Reading")
                    reading["characteristic", as: String.self] = "2a19"
                    reading["value", as: Data.self] = Data([UInt8(value)])
                    reading["time", as: Date.self] = Date(timeIntervalSince1970: Double(value))
                    reading.setValue(.reference(device.objectID), forKey: "device")
                }
                try context.save()
                expectFalse(device.objectID.isTemporary)
                expectEqual(device.version, 1)
                let readings = try context.fetch(
                    FetchRequest(
                        entity: "Reading",
                        predicate: try ObjectPredicate(format: "time > $after AND device.name BEGINSWITH 'therm'"),
                        arguments: ["after": .date(Date(timeIntervalSince1970: 2))],
                        sortDescriptors: [ObjectSortDescriptor("time", ascending: false)]))
                return readings.map { $0.data("value").map { String($0[0]) } ?? "?" }
            }
        }
        expectEqual(found, ["5", "4", "3"])
        // A second store, a fresh context: the objects are committed in storesvc, not in the first context.
        let other = try await service.remoteStore("reader")
        defer { other.close() }
        let count = try await onThread {
            try other.fetch(FetchRequest(entity: "Reading", resultType: .count)).content
        }
        expectEqual(count, .count(5))
        expectEqual(store.lastTransaction, 1)
    }

    @Test func aPermanentInsertIDIsRefusedBeforeAnythingIsSent() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        let request = SaveRequest(inserts: [.init(id: ObjectID(entity: "Device", number: 1), values: [:])])
        let sent = store.client.requestsSent
        await #expect(
            throws: StoreError.invalidRequest(
                field: "insert[0].id",
                message: "Device/1 is permanent; storesvc assigns IDs to inserts, which must be temporary")
        ) {
            try await onThread { try store.save(request) }
        }
        expectEqual(store.client.requestsSent, sent)
    }

    @Test func twoRemoteStoresSeeEachOthersSavesMergedAutomatically() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let contexts = try await service.writerAndReader()
        defer { contexts.close() }
        let (writer, reader) = (contexts.writer, contexts.reader)
        let id = try await onThread { try writer.saveDevice("AA:02", name: "before") }
        let seen = try await onThread {
            try reader.performAndWait { try reader.existingObject(with: id).string("name") }
        }
        expectEqual(seen, "before")

        let changes = ChangeRecorder(contexts.readerStore)
        try await onThread {
            try writer.performAndWait {
                try writer.existingObject(with: id)["name", as: String.self] = "after"
                try writer.save()
            }
        }
        // The reader never fetches again: the change arrives through its store's subscription.
        let merged = try await eventuallyAsync {
            reader.performAndWait { reader.registeredObject(for: id)?.string("name") } == "after"
        }
        expectTrue(merged)
        let version = reader.performAndWait { reader.registeredObject(for: id)?.version }
        expectEqual(version, 2)
        let update = try #require(changes.all.first)
        expectEqual(update.txn, 2)
        expectEqual(update.author, "writer")
        expectEqual(update.updated.map(\.snapshot.id), [id])
        expectEqual(update.updated.first?.changedKeys, ["name"])
        // Only the changed key travels (no read back); the context keeps the values it had.
        expectEqual(update.updated.first?.snapshot.values, ["name": .string("after")])
        let address = reader.performAndWait { reader.registeredObject(for: id)?.string("address") }
        expectEqual(address, "AA:02")

        // A delete made by the reader's side reaches the writer's context too.
        writer.automaticallyMergesChanges = true
        try await onThread {
            try reader.performAndWait {
                reader.delete(try reader.existingObject(with: id))
                try reader.save()
            }
        }
        let gone = try await eventuallyAsync { writer.performAndWait { writer.registeredObject(for: id) == nil } }
        expectTrue(gone)
    }

    @Test func optimisticLockingConflictsAreReportedPerMergePolicy() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let first = try await service.remoteStore("first")
        defer { first.close() }
        let second = try await service.remoteStore("second")
        defer { second.close() }
        let winner = ObjectContext(store: first, name: "winner")
        let loser = ObjectContext(store: second, name: "loser")
        let id = try await onThread { try winner.saveDevice("AA:03", name: "original") }
        try await onThread {
            // Both load version 1; the winner saves first.
            _ = try loser.performAndWait { try loser.existingObject(with: id).string("name") }
            try winner.performAndWait {
                try winner.existingObject(with: id)["name", as: String.self] = "winner"
                try winner.save()
            }
        }

        let conflict = try await onThread { () -> StoreError? in
            loser.performAndWait {
                loser.mergePolicy = .error
                loser.registeredObject(for: id)?["name", as: String.self] = "loser"
                do {
                    try loser.save()
                    return nil
                } catch {
                    return error as? StoreError
                }
            }
        }
        guard case .conflict(let conflicts) = try #require(conflict) else {
            Issue.record("expected a conflict, got \(String(describing: conflict))")
            return
        }
        expectEqual(conflicts.count, 1)
        expectEqual(conflicts.first?.id, id)
        expectEqual(conflicts.first?.version, 1)
        expectEqual(conflicts.first?.currentVersion, 2)
        expectEqual(conflicts.first?.currentValues["name"], .string("winner"))
        expectTrue(try #require(conflict).description.contains("\(id) expected version 1, store has 2"))

        // storeTrump: the store's value (changed since `original`) is kept.
        let keptByStore = try await onThread {
            try loser.performAndWait { () throws -> String? in
                loser.mergePolicy = .storeTrump
                try loser.save()
                return try loser.existingObject(with: id).string("name")
            }
        }
        expectEqual(keptByStore, "winner")

        // objectTrump: the client's value is written over the store's.
        try await onThread {
            try winner.performAndWait {
                winner.mergePolicy = .objectTrump
                try winner.existingObject(with: id)["name", as: String.self] = "winner again"
                try winner.save()
            }
        }
        let stored = try await onThread { () throws -> PropertyValue? in
            try loser.performAndWait {
                loser.mergePolicy = .objectTrump
                loser.registeredObject(for: id)?["name", as: String.self] = "loser wins"
                try loser.save()
            }
            return try first.objects(with: [id]).objects.first?.values["name"]
        }
        expectEqual(stored, .string("loser wins"))
    }

    @Test func aRestartedServiceIsReconnectedAndAChangeMadeMeanwhileStillArrives() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        // A slow first reconnection attempt, so that the other client's save lands while this one is away.
        let store = try await service.remoteStore(
            "survivor", reconnect: BusClient.ReconnectPolicy(initialDelay: .seconds(1), maxDelay: .seconds(1)))
        defer { store.close() }
        let changes = ChangeRecorder(store)
        let context = ObjectContext(store: store, name: "survivor")
        context.automaticallyMergesChanges = true
        _ = try await onThread { try context.saveDevice("AA:04") }
        #expect(try await eventuallyAsync { changes.txns == [1] })

        service.signal(SIGKILL)
        _ = try await onThread { service.waitForExit() }
        let restarted = try await onThread { try StoreServiceProcess(directory: service.directory) }
        defer { restarted.destroy() }
        let other = try await restarted.remoteStore("other")
        defer { other.close() }
        let otherID = try await onThread { try ObjectContext(store: other, name: "other").saveDevice("AA:05") }

        let arrived = try await eventuallyAsync { changes.txns.contains(2) }
        expectTrue(arrived, "the change made while disconnected arrives; log: \(restarted.log)")
        expectEqual(changes.txns, [1, 2], "no gap, no duplicate")
        expectEqual(changes.all.last?.inserted.map(\.id), [otherID])
        // The reconnected store works for calls too, and the live stream continues after the replay.
        _ = try await onThread { try context.saveDevice("AA:06") }
        #expect(try await eventuallyAsync { changes.txns == [1, 2, 3] })
        expectNil(store.changeStreamProblem)
    }

    @Test func aSaveMadeWhileTheServiceRestartsWaitsForItAndIsCommitted() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore(
            "patient",
            reconnect: BusClient.ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(100)))
        defer { store.close() }
        _ = try await onThread { try ObjectContext(store: store, name: "patient").saveDevice("AA:07") }
        service.signal(SIGKILL)
        _ = try await onThread { service.waitForExit() }
        #expect(try await eventuallyAsync { !store.client.connectionState.isConnected })

        let saving = Task {
            try await onThread { try ObjectContext(store: store, name: "patient").saveDevice("AA:08") }
        }
        try await Task.sleep(for: .milliseconds(100))
        let restarted = try await onThread { try StoreServiceProcess(directory: service.directory) }
        defer { restarted.destroy() }
        let savedID = try await saving.value
        let check = try await restarted.remoteStore("check")
        defer { check.close() }
        let fetched = try await onThread {
            try check.fetch(
                FetchRequest(entity: "Device", sortDescriptors: [ObjectSortDescriptor("address")]))
        }
        guard case .objects(let devices) = fetched.content else {
            Issue.record("fetched \(fetched.content)")
            return
        }
        expectEqual(
            devices.map { $0.values["address"] }, [.string("AA:07"), .string("AA:08")],
            "the save made while the service was down is there")
        expectEqual(devices.last?.id, savedID)
    }

    @Test func openingWithoutARunningServiceNamesTheSocket() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("nobody.sock").path
        do {
            _ = try await RemoteStore.open(socketPath: path, options: RemoteStore.Options(reconnect: nil))
            Issue.record("open succeeded without a service")
        } catch let error as StoreError {
            guard case .unavailable = error else {
                Issue.record("expected unavailable, got \(error)")
                return
            }
            expectEqual(error.description, "store unavailable: no service is listening at \(path)")
        }
    }

    @Test func callsAfterTheServiceIsGoneFailAsUnavailableNamingTheSocket() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore(reconnect: nil)
        defer { store.close() }
        service.signal(SIGKILL)
        _ = try await onThread { service.waitForExit() }
        let failure = try await onThread { () -> StoreError? in
            // The loss may be noticed between calls or during one: either way it is `unavailable`.
            for _ in 0..<1000 {
                do {
                    _ = try store.fetch(FetchRequest(entity: "Device"))
                } catch {
                    return error as? StoreError
                }
                usleep(1000)
            }
            return nil
        }
        guard case .unavailable(let why) = try #require(failure) else {
            Issue.record("expected unavailable, got \(String(describing: failure))")
            return
        }
        expectTrue(why.contains(service.socketPath))
    }

    @Test func unknownEntitiesAndWrongTypesAreClearErrorsAndLeaveTheStoreIntact() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        let context = ObjectContext(store: store, name: "writer")
        _ = try await onThread { try context.saveDevice("AA:07") }

        let unknownEntity = try await onThread { () -> StoreError? in
            do {
                _ = try store.fetch(FetchRequest(entity: "Spaceship"))
                return nil
            } catch {
                return error as? StoreError
            }
        }
        guard case .invalidRequest(let field, let message) = try #require(unknownEntity) else {
            Issue.record("expected invalidRequest, got \(String(describing: unknownEntity))")
            return
        }
        expectEqual(field, "entity")
        expectTrue(message.contains("Spaceship"))

        let wrongType = try await onThread { () -> StoreError? in
            do {
                _ = try store.save(
                    SaveRequest(inserts: [
                        .init(
                            id: ObjectID(entity: "Device", temporaryReference: "d"),
                            values: ["address": .int(42), "connected": .bool(true)])
                    ]))
                return nil
            } catch {
                return error as? StoreError
            }
        }
        guard case .invalidRequest(let typeField, let typeMessage) = try #require(wrongType) else {
            Issue.record("expected invalidRequest, got \(String(describing: wrongType))")
            return
        }
        expectEqual(typeField, "insert[0].values.address")
        expectTrue(typeMessage.contains("string"))

        let unknownKey = try await onThread { () -> StoreError? in
            do {
                _ = try store.save(
                    SaveRequest(inserts: [
                        .init(
                            id: ObjectID(entity: "Device", temporaryReference: "d"),
                            values: ["address": .string("AA:08"), "warpFactor": .int(9)])
                    ]))
                return nil
            } catch {
                return error as? StoreError
            }
        }
        expectEqual(
            unknownKey,
            .invalidRequest(
                field: "insert[0].values.warpFactor",
                message: "Device has no attribute or relationship 'warpFactor'"))

        // Nothing was half-saved, and the store still serves the same connection.
        let devices = try await onThread { try store.fetch(FetchRequest(entity: "Device", resultType: .count)) }
        expectEqual(devices.content, .count(1))
        expectEqual(devices.txn, 1)
        _ = try await onThread { try context.saveDevice("AA:09") }
        expectEqual(store.lastTransaction, 2)
    }

    @Test func aContextStackOnARemoteStoreSavesWorkerImportsThroughTheRoot() async throws {
        let service = try await onThread { try StoreServiceProcess.start() }
        defer { service.destroy() }
        let store = try await service.remoteStore()
        defer { store.close() }
        let stack = ContextStack(store: store)
        try await onThread {
            let worker = stack.newWorker(name: "import")
            try worker.performAndWait {
                for i in 0..<50 {
                    let device = worker.insert(entity: "Device")
                    device["address", as: String.self] = "BB:\(i)"
                }
                try worker.save()
            }
            try stack.saveRoot()
        }
        let other = try await service.remoteStore("auditor")
        defer { other.close() }
        let stored = try await onThread { try other.fetch(FetchRequest(entity: "Device", resultType: .count)) }
        expectEqual(stored.content, .count(50))
    }
}
