import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSQLite
@testable import ContextBusSupport
@testable import ContextBusTransport
@testable import ContextBusWire

/// Starting, refusing, stopping and crashing the real `storesvc` process.
struct StoreServiceLifecycleTests {
    @Test func badFlagsExitWithStatus64AndSayWhy() throws {
        let output = try runProduct("storesvc", arguments: ["--max-frame", "huge"])
        expectEqual(output.status, 64)
        expectTrue(output.standardError.contains("--max-frame 'huge'"))
    }

    @Test func helpDocumentsEveryFlag() throws {
        let output = try runProduct("storesvc", arguments: ["--help"])
        expectEqual(output.status, 0)
        for flag in [
            "--socket", "--database", "--model", "--max-frame", "--max-in-flight", "--max-outbound", "--socket-mode",
            "--allow-uid", "--allow-gid", "--history", "--page-size", "--log-level",
        ] {
            expectTrue(output.standardOutput.contains(flag), "\(flag) is not documented")
        }
    }

    @Test func pageSizeMakesANewDatabaseAndAnExistingOneKeepsItsOwnWithAWarning() throws {
        /// The service's log once it holds `text` (the line is written just after the socket opens).
        func log(of service: StoreServiceProcess, containing text: String) -> String {
            let deadline = ContinuousClock.now + .seconds(10)
            while !service.log.contains(text), ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
            return service.log
        }
        let first = try StoreServiceProcess.start(arguments: ["--page-size", "2048"])
        defer { first.destroy() }
        expectTrue(log(of: first, containing: "pages of").contains("pages of 2048 bytes"))
        first.signal(SIGTERM)
        expectEqual(first.waitForExit(), 0)
        let second = try StoreServiceProcess(directory: first.directory, arguments: ["--page-size", "8192"])
        defer { second.destroy() }
        let warning = "--page-size 8192 applies to a new database only"
        expectTrue(log(of: second, containing: warning).contains(warning))
        expectTrue(second.log.contains("pages of 2048 bytes"))
        second.signal(SIGTERM)
        expectEqual(second.waitForExit(), 0)
        let store = try SQLiteStore(url: URL(fileURLWithPath: first.databasePath), model: .deviceReadings)
        defer { store.close() }
        expectEqual(store.pageSize, 2048)
    }

    @Test func aSecondServiceOnTheSameDatabaseRefusesToStart() throws {
        let first = try StoreServiceProcess.start()
        defer { first.destroy() }
        let second = try StoreServiceProcess(
            directory: first.directory, socketName: "other.sock", waitForSocket: false)
        expectEqual(second.waitForExit(), 1)
        expectTrue(second.log.contains("in use by another storesvc"))
        expectTrue(second.log.contains("process \(first.pid)"))
        // The first one is unharmed.
        let connection = try RawBusConnection(path: first.socketPath)
        try connection.hello()
    }

    @Test func aSecondServiceOnALiveSocketRefusesToStart() throws {
        let first = try StoreServiceProcess.start()
        defer { first.destroy() }
        let otherDirectory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: otherDirectory) }
        let process = Process()
        process.executableURL = productsDirectory().appendingPathComponent("storesvc")
        process.arguments = [
            "--socket", first.socketPath, "--database", otherDirectory.appendingPathComponent("db.sqlite").path,
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        expectEqual(process.terminationStatus, 1)
    }

    @Test func sigtermAnswersEverySaveInFlightThenExitsZero() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let count = 300
        var frames: [UInt8] = []
        for i in 1...count {
            frames += Frame.encode(
                payload: Array(
                    #"{"jsonrpc":"2.0","id":\#(i),"method":"store.save","params":{"insert":[{"entity":"Device","ref":"d","values":{"address":"A\#(i)"}}]}}"#
                        .utf8))
        }
        try connection.write(frames)
        // Once the first answer is back the service has read the whole pipeline (45 KB, one
        // read): every request is in flight when SIGTERM arrives. Requests still unread in the
        // socket when a service stops are never received, so never answered.
        var answered: [Int64: JSONValue] = [:]
        let first = try #require(try connection.readMessage())
        answered[try #require(first["id"]?.intValue)] = first
        service.signal(SIGTERM)
        while answered.count < count, let message = try connection.readMessage() {
            if let id = message["id"]?.intValue { answered[id] = message }
        }
        expectEqual(answered.count, count, "every save in flight is answered before the connection closes")
        expectEqual(service.waitForExit(), 0)
        let committed = answered.values.filter { $0["result"] != nil }
        expectFalse(committed.isEmpty)
        expectTrue(
            answered.values.allSatisfy { $0["result"] != nil || $0["error"]?["code"] == .int(503) },
            "a save is committed or refused as unavailable")
        // Restart: every acknowledged save is there.
        let restarted = try StoreServiceProcess(directory: service.directory)
        defer { restarted.destroy() }
        let probe = try RawBusConnection(path: restarted.socketPath)
        try probe.hello()
        let stored = try probe.call(1, "store.fetch", #"{"entity":"Device","result":"count"}"#)
        expectEqual(stored["result"]?["count"], .int(Int64(committed.count)))
    }

    @Test func sigintStopsCleanlyToo() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        service.signal(SIGINT)
        expectEqual(service.waitForExit(), 0)
        expectTrue(service.log.contains("stopped at txn 0"))
        expectFalse(FileManager.default.fileExists(atPath: service.socketPath), "the socket file is removed")
    }

    @Test func killDashNineDuringASaveStormLosesNoAcknowledgedSaveAndHalvesNone() async throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let acknowledged = Locked<[String]>([])
        let writers = (0..<4).map { writer in
            Thread.detachNewThreadWithResult {
                guard let connection = try? RawBusConnection(path: service.socketPath), (try? connection.hello()) != nil
                else { return }
                for i in 0..<10_000 {
                    let address = "W\(writer)-\(i)"
                    let reading =
                        #"{"entity":"Reading","values":{"characteristic":"2a19","value":"AQ==","time":"2024-01-01T00:00:00Z","device":"d"}}"#
                    let params =
                        #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"\#(address)"}},\#(reading),\#(reading),\#(reading)]}"#
                    guard let answer = try? connection.call(i + 1, "store.save", params), answer["result"] != nil else {
                        return
                    }
                    acknowledged.withLock { $0.append(address) }
                }
            }
        }
        expectTrue(eventually { acknowledged.withLock { $0.count } >= 200 })
        service.signal(SIGKILL)
        expectEqual(service.waitForExit(), 128 + SIGKILL)
        for writer in writers { writer.wait() }
        let saved = acknowledged.withLock { $0 }
        let restarted = try StoreServiceProcess(directory: service.directory)
        defer { restarted.destroy() }
        let client = try await restarted.client()
        defer { client.close() }
        let devices = try await client.call(StoreFetch.self, FetchParams(entity: "Device"))
        guard case .objects(let objects) = devices.content else {
            Issue.record("expected objects")
            return
        }
        let stored = Set(objects.compactMap { $0.values["address"]?.stringValue })
        expectTrue(Set(saved).isSubset(of: stored), "an acknowledged save is missing after kill -9")
        expectTrue(objects.allSatisfy { $0.values["readings"]?.referencesValue?.count == 3 }, "a save was half applied")
        let readings = try await client.call(StoreFetch.self, FetchParams(entity: "Reading", resultType: .count))
        expectEqual(readings.content, .count(objects.count * 3))
    }
}

extension Thread {
    /// Runs `body` on a new thread; `wait()` on the result blocks until it has returned.
    static func detachNewThreadWithResult(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread.detachNewThread {
            body()
            group.leave()
        }
        return group
    }
}
