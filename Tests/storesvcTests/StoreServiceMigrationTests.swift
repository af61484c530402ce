import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport
@testable import ContextBusWire

/// A real storesvc started with a new model on the committed fixture database (`MigrationFixture`): it migrates
/// in place before it listens, or refuses with exit status 78 naming each difference and leaves the file as it
/// was; `--check-migration` says which without touching it; a `kill -9` at any point of a migration leaves the old
/// file usable, or the new one complete, and the backup whole.
struct StoreServiceMigrationTests {
    /// The fixture's objects, read with its model.
    private static func fixtureObjects(scratch: URL) throws -> [ObjectID: ObjectSnapshot] {
        let path = try MigrationFixture.copy(into: scratch, as: "fixture-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try MigrationFixture.objects(ofDatabaseAt: path, model: MigrationFixture.model, scratch: scratch)
    }

    @Test func theServiceMigratesTheDatabaseBeforeItListensAndReportsThePreviousVersion() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try MigrationFixture.copy(into: directory)
        let modelFile = try MigrationFixture.write(MigrationFixture.renamed, into: directory, as: "model.json")
        let service = try StoreServiceProcess(directory: directory, arguments: ["--model", modelFile])
        defer { service.destroy() }
        let client = try await service.client()
        let model = try await client.call(StoreModel.self)
        expectEqual(model.version, MigrationFixture.renamed.versionHash)
        expectEqual(model.previousVersions, [MigrationFixture.model.versionHash])
        let raw = try await client.call(method: "store.model")
        expectEqual(raw["previousVersions"], .array([.string(MigrationFixture.model.versionHash)]))
        let fetched = try await client.call(StoreFetch.self, FetchParams(entity: "Probe", predicate: "reading == 7"))
        guard case .objects(let objects) = fetched.content else { return }
        expectEqual(objects.map(\.id), [ObjectID(entity: "Probe", number: 2)])
        expectEqual(objects.first?.values["name"], .string("beta"))
        expectNil(objects.first?.values["note"])
        expectTrue(FileManager.default.fileExists(atPath: database + ".before-" + MigrationFixture.model.versionHash))
        expectTrue(service.log.contains("migrated \(database) in place"))
        expectTrue(service.log.contains("ok       Probe: entity renamed from Sensor (objects keep their numbers)"))
    }

    @Test func aModelThatCannotBeMigratedStopsTheServiceWithStatus78NamingEachDifference() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try MigrationFixture.copy(into: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let model = try MigrationFixture.model { entities in
            entities[1].attributes[10].type = .int
            entities[0].attributes.append(AttributeDescription("region", .string))
            entities[1].uniqueBy.append(["serial"])
        }
        let modelFile = try MigrationFixture.write(model, into: directory, as: "model.json")
        let service = try StoreServiceProcess(
            directory: directory, arguments: ["--model", modelFile], waitForSocket: false)
        defer { service.destroy() }
        expectEqual(service.waitForExit(), 78)
        let log = service.log
        for line in [
            "Sensor.gain: cannot be migrated: type changed from double to int",
            "Site.region: cannot be migrated: a required attribute added without a default",
            "Sensor: cannot be migrated: uniqueBy [serial] added, but live objects share its values: Sensor/1, Sensor/2",
            "nothing was changed",
        ] {
            expectTrue(log.contains(line), "\(line) in \(log)")
        }
        expectEqual(try Data(contentsOf: URL(fileURLWithPath: database)), before)
        expectFalse(FileManager.default.fileExists(atPath: database + ".before-" + MigrationFixture.model.versionHash))
        // The old model still serves the file.
        let again = try StoreServiceProcess(
            directory: directory,
            arguments: ["--model", try MigrationFixture.write(MigrationFixture.model, into: directory, as: "old.json")])
        again.destroy()
    }

    @Test func aRenamedFromThatIsNotANameStopsTheServiceWithStatus78() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try MigrationFixture.copy(into: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let modelFile = directory.appendingPathComponent("model.json")
        var text = try String(
            contentsOf: MigrationFixture.directory.appendingPathComponent("sensors-v1.json"), encoding: .utf8)
        text = text.replacingOccurrences(
            of: #""name":"level""#, with: #""name":"reading","renamedFrom":"Sensor.level""#)
        try Data(text.utf8).write(to: modelFile)
        let service = try StoreServiceProcess(
            directory: directory, arguments: ["--model", modelFile.path], waitForSocket: false)
        defer { service.destroy() }
        expectEqual(service.waitForExit(), 78)
        expectTrue(service.log.contains("Sensor.reading: renamedFrom 'Sensor.level' is not a name"), "\(service.log)")
        expectEqual(try Data(contentsOf: URL(fileURLWithPath: database)), before)
    }

    @Test func checkMigrationPrintsThePlanAndLeavesTheFileAsItIs() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try MigrationFixture.copy(into: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let good = try MigrationFixture.write(MigrationFixture.renamed, into: directory, as: "good.json")
        let check = try runProduct(
            "storesvc", arguments: ["--database", database, "--model", good, "--check-migration"])
        expectEqual(check.status, 0, "\(check.standardError)")
        let lines = check.standardOutput.split(separator: "\n").map(String.init)
        expectEqual(
            lines.first,
            "\(database): \(MigrationPlan(from: MigrationFixture.model, to: MigrationFixture.renamed).summary)")
        for line in [
            "ok       Probe: entity renamed from Sensor (objects keep their numbers)",
            "ok       Probe.reading: attribute renamed from level",
            "ok       Probe.unit: attribute added (string, optional)",
            "ok       Probe.note: attribute removed (its values are dropped)",
            "ok       Legacy: entity removed (its objects are deleted)",
        ] {
            expectTrue(lines.contains(line), "\(line) in \(lines)")
        }
        let bad = try MigrationFixture.write(
            try MigrationFixture.model { $0[1].uniqueBy.append(["serial"]) }, into: directory, as: "bad.json")
        let refused = try runProduct(
            "storesvc", arguments: ["--database", database, "--model", bad, "--check-migration"])
        expectEqual(refused.status, 78)
        expectTrue(
            refused.standardOutput.contains(
                "refused  Sensor: cannot be migrated: uniqueBy [serial] added, but live objects share its values: Sensor/1, Sensor/2"
            ),
            "\(refused.standardOutput)")
        let same = try runProduct(
            "storesvc",
            arguments: [
                "--database", database, "--model",
                MigrationFixture.directory.appendingPathComponent("sensors-v1.json").path, "--check-migration",
            ])
        expectEqual(same.status, 0)
        expectTrue(same.standardOutput.contains("nothing to migrate"))
        expectEqual(try Data(contentsOf: URL(fileURLWithPath: database)), before)
        let contents = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        expectFalse(contents.contains { $0.contains(".before-") }, "\(contents)")
    }

    /// `--test-kill-during-migration N` ends the process at the N-th point the migration passes (`planned`, each
    /// step of the backup, `backed up`, each phase, `recorded`, `committed`), for N = 1, 2, … until the service
    /// gets through and serves. After each kill: the file opens with the old model and holds every object as it was
    /// (or, killed after the commit, with the new model and every object migrated); a backup, if there is one, is
    /// whole; and opening the file with the new model again migrates it completely.
    @Test func aMigrationKilledAtAnyPointLeavesTheOldFileOrTheNewOneAndTheBackupWhole() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let before = try Self.fixtureObjects(scratch: directory)
        let after = MigrationFixture.renamedObjects(before)
        let modelFile = try MigrationFixture.write(MigrationFixture.renamed, into: directory, as: "model.json")
        var killedAt: [String] = []
        var backedUp = false
        var point = 1
        while point < 100 {
            let run = directory.appendingPathComponent("point-\(point)")
            try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
            let database = try MigrationFixture.copy(into: run)
            let backup = database + ".before-" + MigrationFixture.model.versionHash
            let service = try StoreServiceProcess(
                directory: run, arguments: ["--model", modelFile, "--test-kill-during-migration", "\(point)"],
                waitForSocket: false)
            expectTrue(eventually { !service.process.isRunning || RawBusConnection.canConnect(to: service.socketPath) })
            if service.process.isRunning {
                // Past the last point: it migrated and serves.
                service.destroy()
                break
            }
            let status = service.waitForExit()
            guard status == 128 + SIGKILL else {
                Issue.record("point \(point): exit status \(status): \(service.log)")
                break
            }
            let name = service.log.components(separatedBy: "killed at point ").last.map {
                String($0.prefix { $0 != "\n" })
            }
            killedAt.append(name ?? "?")
            // Points come in order: from `backed up` on, the backup is there.
            if killedAt.last!.hasSuffix(", backed up") { backedUp = true }
            // The file is the old one, usable, or (killed after the commit) the new one, complete.
            let state = try SQLiteStore.migrationPlan(
                forDatabaseAt: URL(fileURLWithPath: database), model: MigrationFixture.model)
            if state == nil {
                expectEqual(
                    try MigrationFixture.objects(ofDatabaseAt: database, model: MigrationFixture.model, scratch: run),
                    before,
                    "killed at \(killedAt.last!)")
            } else {
                expectEqual(
                    state?.stored.versionHash, MigrationFixture.renamed.versionHash, "killed at \(killedAt.last!)")
                expectEqual(
                    try MigrationFixture.objects(ofDatabaseAt: database, model: MigrationFixture.renamed, scratch: run),
                    after)
            }
            if FileManager.default.fileExists(atPath: backup) {
                expectEqual(
                    try MigrationFixture.objects(ofDatabaseAt: backup, model: MigrationFixture.model, scratch: run),
                    before)
            } else {
                expectFalse(backedUp, "no backup after a kill at \(killedAt.last!)")
            }
            // And the migration goes through when it runs again.
            let store = try SQLiteStore(url: URL(fileURLWithPath: database), model: MigrationFixture.renamed)
            expectEqual(try MigrationFixture.objects(of: store), after, "after a kill at \(killedAt.last!)")
            store.close()
            try? FileManager.default.removeItem(at: run)
            point += 1
        }
        // Every point was reached once: the backup's steps, the phases, the commit.
        expectEqual(killedAt.first, "1, planned")
        expectTrue(killedAt.contains { $0.hasSuffix(", backup") })
        expectTrue(killedAt.contains { $0.hasSuffix(", table Probe") })
        expectEqual(killedAt.last.map { $0.hasSuffix(", committed") }, true, "\(killedAt)")
    }

    @Test func aSubscriberWithSinceBeforeTheMigrationReceivesTheEventsUnderTheNewNames() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try MigrationFixture.copy(into: directory)
        let modelFile = try MigrationFixture.write(MigrationFixture.renamed, into: directory, as: "model.json")
        let service = try StoreServiceProcess(directory: directory, arguments: ["--model", modelFile])
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let subscribed = try connection.call(1, "store.subscribe", #"{"entity":"Probe","since":0}"#)
        expectNotNil(subscribed["result"]?["subscription"])
        let saved = try RawBusConnection(path: service.socketPath)
        try saved.hello()
        let answer = try saved.call(
            2, "store.save", #"{"update":[{"id":"Probe/4","values":{"reading":12}}]}"#)
        expectEqual(answer["result"]?["txn"], .int(9))
        var events: [JSONValue] = []
        while events.last?["params"]?["txn"] != .int(9) {
            guard let message = try connection.readMessage() else { break }
            if message["method"] == .string("store.changed") { events.append(message) }
        }
        let txns = events.compactMap { $0["params"]?["txn"]?.intValue }
        // Transactions 3 and 7 changed Legacy only; 1 inserted no Probe.
        expectEqual(txns, [2, 4, 5, 6, 8, 9])
        let inserted = events[0]["params"]?["inserted"]?.arrayValue ?? []
        expectEqual(inserted.count, 6)
        let alpha = try #require(inserted.first { $0["id"] == .string("Probe/1") })
        expectEqual(alpha["values"]?["reading"], .int(3))
        expectNil(alpha["values"]?["level"])
        expectNil(alpha["values"]?["note"])
        let updated = events[1]["params"]?["updated"]?.arrayValue ?? []
        let beta = try #require(updated.first { $0["id"] == .string("Probe/2") })
        expectEqual(beta["values"], .object(["reading": .int(7)]))
        expectEqual(events[2]["params"]?["deleted"], .array([.string("Probe/6")]))
        expectEqual(events.last?["params"]?["updated"]?.arrayValue?.first?["values"], .object(["reading": .int(12)]))
        // store.history names the new entity too.
        let history = try saved.call(3, "store.history", #"{"since":4,"limit":2}"#)
        expectEqual(history["result"]?["transactions"]?.arrayValue?.first?["deleted"], .array([.string("Probe/6")]))
    }

    @Test func aClientWithTheOldModelGetsAClearErrorUntilItReadsTheModelAgain() async throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try MigrationFixture.copy(into: directory)
        let oldFile = try MigrationFixture.write(MigrationFixture.model, into: directory, as: "old.json")
        let newFile = try MigrationFixture.write(MigrationFixture.renamed, into: directory, as: "new.json")
        let old = try StoreServiceProcess(directory: directory, arguments: ["--model", oldFile])
        let store = try await RemoteStore.open(
            socketPath: old.socketPath,
            options: RemoteStore.Options(
                reconnect: .init(initialDelay: .milliseconds(20), maxDelay: .milliseconds(100))))
        defer { store.close() }
        expectEqual(try await onThread { try store.fetch(FetchRequest(entity: "Sensor")).txn }, 8)
        old.signal(SIGTERM)
        expectEqual(old.waitForExit(), 0)
        let new = try StoreServiceProcess(directory: directory, arguments: ["--model", newFile])
        defer { new.destroy() }
        let error = try await onThread { () -> StoreError? in
            do {
                _ = try store.fetch(FetchRequest(entity: "Sensor"))
                return nil
            } catch let error as StoreError {
                return error
            }
        }
        expectEqual(
            error,
            .modelChanged(requested: MigrationFixture.model.versionHash, served: MigrationFixture.renamed.versionHash))
        let stopped = try await eventuallyAsync {
            store.changeStreamProblem?.contains("open a new RemoteStore") == true
        }
        expectTrue(stopped, "\(String(describing: store.changeStreamProblem))")
        // On the wire: 412 with the models, for any store method but store.model.
        let raw = try RawBusConnection(path: new.socketPath)
        try raw.hello()
        let refused = try raw.call(
            1, "store.get", #"{"ids":["Sensor/1"],"model":"\#(MigrationFixture.model.versionHash)"}"#)
        expectEqual(refused["error"]?["code"], .int(412))
        expectEqual(refused["error"]?["data"]?["model"], .string(MigrationFixture.renamed.versionHash))
        expectEqual(refused["error"]?["data"]?["requested"], .string(MigrationFixture.model.versionHash))
        expectNotNil(try raw.call(2, "store.model", #"{"model":"\#(MigrationFixture.model.versionHash)"}"#)["result"])
        // Read again, the model serves.
        let reopened = try await RemoteStore.open(socketPath: new.socketPath)
        defer { reopened.close() }
        let probe = try await onThread { try reopened.objects(with: [ObjectID(entity: "Probe", number: 1)]) }
        expectEqual(probe.objects.first?.values["reading"], .int(3))
    }
}
