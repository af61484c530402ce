import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// `NameWatcher` following the owner of a well-known name on a private bus.
@Suite(.enabled(if: DBusTestEnvironment.hasDaemon, "needs /usr/bin/dbus-daemon"))
struct NameWatcherTests {
    @Test func startsWithTheCurrentOwner() async throws {
        try await withPrivateBus { bus, connection in
            let owner = try await bus.connect()
            defer { owner.close() }
            _ = try await owner.requestName("org.example.Watched")
            let watcher = try await NameWatcher.start(watching: "org.example.Watched", on: connection)
            defer { watcher.cancel() }
            expectEqual(watcher.owner, owner.uniqueName)
        }
    }

    @Test func seesANameAppearAndDisappearWhenItsOwnerDisconnects() async throws {
        try await withPrivateBus { bus, connection in
            let (changes, continuation) = AsyncStream.makeStream(of: NameWatcher.Change.self)
            let watcher = try await NameWatcher.start(watching: "org.example.Watched", on: connection) {
                continuation.yield($0)
            }
            defer { watcher.cancel() }
            expectNil(watcher.owner)
            let owner = try await bus.connect()
            _ = try await owner.requestName("org.example.Watched")
            _ = try await watcher.waitForOwner(timeout: .seconds(20))
            expectEqual(watcher.owner, owner.uniqueName)
            owner.close()
            let seen = try await firstElements(of: changes, count: 2)
            expectEqual(
                seen,
                [
                    NameWatcher.Change(name: "org.example.Watched", oldOwner: nil, newOwner: owner.uniqueName),
                    NameWatcher.Change(name: "org.example.Watched", oldOwner: owner.uniqueName, newOwner: nil),
                ])
            expectNil(watcher.owner)
        }
    }

    @Test(.enabled(if: DBusTestEnvironment.hasPythonDBus, "needs python3-dbus"))
    func followsThePythonServiceFromStartToExit() async throws {
        try await withPrivateBus { bus, connection in
            let (changes, continuation) = AsyncStream.makeStream(of: NameWatcher.Change.self)
            let watcher = try await NameWatcher.start(watching: "org.example.Thing", on: connection) {
                continuation.yield($0)
            }
            defer { watcher.cancel() }
            let service = try PythonService(bus: bus)
            defer { service.stop() }
            try await expectEqual(watcher.waitForOwner(timeout: .seconds(20)), service.uniqueName)
            _ = try await connection.call(
                destination: service.name, path: PythonService.thingPath, interface: PythonService.interface,
                member: "Quit")
            expectTrue(service.process.waitForExit())
            let seen = try await firstElements(of: changes, count: 2)
            expectEqual(
                seen,
                [
                    NameWatcher.Change(name: "org.example.Thing", oldOwner: nil, newOwner: service.uniqueName),
                    NameWatcher.Change(name: "org.example.Thing", oldOwner: service.uniqueName, newOwner: nil),
                ])
        }
    }

    @Test func waitForOwnerTimesOutWhenNobodyTakesTheName() async throws {
        try await withPrivateBus { _, connection in
            let watcher = try await NameWatcher.start(watching: "org.example.Nobody", on: connection)
            defer { watcher.cancel() }
            await #expect(throws: NameWatcher.WaitError.timedOut(name: "org.example.Nobody", after: .milliseconds(100)))
            {
                _ = try await watcher.waitForOwner(timeout: .milliseconds(100))
            }
        }
    }

    @Test func cancellingFailsAPendingWait() async throws {
        try await withPrivateBus { _, connection in
            let watcher = try await NameWatcher.start(watching: "org.example.Nobody", on: connection)
            let wait = Task { try await watcher.waitForOwner(timeout: .seconds(60)) }
            watcher.cancel()
            await #expect(throws: NameWatcher.WaitError.cancelled(name: "org.example.Nobody")) {
                _ = try await wait.value
            }
        }
    }

    @Test func aSubscriptionByWellKnownNameFollowsANewOwner() async throws {
        try await withPrivateBus { bus, connection in
            let first = try await bus.connect()
            _ = try await first.requestName("org.example.Moving")
            let (senders, continuation) = AsyncStream.makeStream(of: String.self)
            let subscription = try await connection.subscribe(
                to: .signal(sender: "org.example.Moving", interface: "org.example.Beacon", member: "Beep")
            ) { continuation.yield($0.sender ?? "") }
            defer { subscription.cancel() }
            let beep = DBusMessage.signal(path: .root, interface: "org.example.Beacon", member: "Beep")
            try first.send(beep)
            first.close()
            let second = try await bus.connect()
            defer { second.close() }
            _ = try await second.requestName("org.example.Moving")
            let watcher = try await NameWatcher.start(watching: "org.example.Moving", on: connection)
            defer { watcher.cancel() }
            _ = try await watcher.waitForOwner(timeout: .seconds(20))
            try second.send(beep)
            try await expectEqual(firstElements(of: senders, count: 2), [first.uniqueName, second.uniqueName])
        }
    }
}
