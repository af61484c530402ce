import Foundation
import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// The connection against a real private `dbus-daemon`, and a python-dbus service on it.
@Suite(.enabled(if: DBusTestEnvironment.hasDaemon, "needs /usr/bin/dbus-daemon"))
struct DBusConnectionTests {
    private static let thing = PythonService.thingPath
    private static let interface = PythonService.interface

    private func callThing(
        _ connection: DBusConnection, _ member: String, _ body: [DBusValue] = [], timeout: Duration = .seconds(20)
    ) async throws -> DBusMessage {
        try await connection.call(
            destination: "org.example.Thing", path: Self.thing, interface: Self.interface, member: member, body: body,
            timeout: timeout)
    }

    // MARK: - The bus

    @Test func helloGivesAUniqueName() async throws {
        try await withPrivateBus { _, connection in
            expectTrue(connection.uniqueName.hasPrefix(":"))
            expectFalse(connection.serverGUID.isEmpty)
        }
    }

    @Test func listNamesIncludesTheBusAndThisConnection() async throws {
        try await withPrivateBus { _, connection in
            let names = try await connection.listNames()
            expectTrue(names.contains("org.freedesktop.DBus"))
            expectTrue(names.contains(connection.uniqueName))
        }
    }

    @Test func getNameOwnerAnswersTheOwnerOrNil() async throws {
        try await withPrivateBus { bus, connection in
            let other = try await bus.connect()
            defer { other.close() }
            try await expectEqual(other.requestName("org.example.Owned"), .primaryOwner)
            try await expectEqual(connection.nameOwner(of: "org.example.Owned"), other.uniqueName)
            #expect(try await connection.nameOwner(of: "org.example.Nobody") == nil)
        }
    }

    @Test func connectsThroughTheFirstUsableAddressOfAList() async throws {
        try await withPrivateBus { bus, _ in
            // tcp is skipped, the missing path fails to connect, the daemon's own list (abstract first) works.
            let list = "tcp:host=127.0.0.1,port=1;unix:path=\(bus.directory)/missing;\(bus.address)"
            let connection = try await DBusConnection.connect(to: list)
            defer { connection.close() }
            expectTrue(connection.uniqueName.hasPrefix(":"))
        }
    }

    @Test func connectsToAnAbstractSocket() async throws {
        try await withPrivateBus { bus, _ in
            let abstract = try #require(bus.address.split(separator: ";").first { $0.hasPrefix("unix:abstract=") })
            let connection = try await DBusConnection.connect(to: String(abstract))
            defer { connection.close() }
            #expect(try await connection.listNames().contains(connection.uniqueName))
        }
    }

    @Test func failsWithTheLastErrorWhenNoAddressConnects() async throws {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        await #expect(
            throws: DBusConnectionError.system(operation: "connect to unix:path=\(directory)/none", errno: ENOENT)
        ) {
            _ = try await DBusConnection.connect(to: "unix:path=\(directory)/none")
        }
    }

    // MARK: - Calls

    @Test func callsAServiceMethodAndReadsItsResult() async throws {
        try await withPythonService { _, connection, _ in
            let reply = try await callThing(connection, "Add", [.int32(40), .int32(2)])
            expectEqual(reply.body, [.int32(42)])
            expectEqual(reply.kind, .methodReturn)
        }
    }

    @Test func echoesNestedValuesThroughAVariant() async throws {
        try await withPythonService { _, connection, _ in
            let values: [DBusValue] = [
                .propertyMap(["Powered": .boolean(true), "RSSI": .int16(-60), "Data": .bytes([0, 255])]),
                .structure([.uint64(UInt64.max), .double(-0.5), .strings(["a", "b"])]),
                .array(.array(.int32), [.array(.int32, []), .array(.int32, [.int32(7)])]),
                .objectPath(PythonService.thingPath),
            ]
            for value in values {
                let reply = try await callThing(connection, "Echo", [.variant(value)])
                expectEqual(reply.body, [.variant(value)])
            }
        }
    }

    @Test func surfacesAnErrorReplyWithItsNameAndMessage() async throws {
        try await withPythonService { _, connection, _ in
            await #expect(throws: DBusError(name: "org.example.Error.Failed", message: "it broke")) {
                _ = try await callThing(connection, "Fail", [.string("it broke")])
            }
        }
    }

    @Test func surfacesTheBusErrorForAnUnknownDestination() async throws {
        try await withPrivateBus { _, connection in
            do {
                _ = try await connection.call(
                    destination: "org.example.Absent", path: .root, interface: "org.example.X", member: "Y")
                Issue.record("the call succeeded")
            } catch let error as DBusError {
                expectEqual(error.name, DBusError.serviceUnknown)
            }
        }
    }

    @Test func aCallWithoutAnswerTimesOutAndItsLateReplyIsDropped() async throws {
        try await withPythonService { _, connection, _ in
            await #expect(throws: DBusConnectionError.timedOut(member: "NeverAnswer", after: .milliseconds(200))) {
                _ = try await callThing(connection, "NeverAnswer", timeout: .milliseconds(200))
            }
            expectEqual(connection.pendingCallCount, 0)
            // The service now sends the kept reply (to a call we gave up on) before answering this call.
            let released = try await callThing(connection, "ReleaseAnswers")
            expectEqual(released.body, [.uint32(1)])
            expectTrue(connection.isConnected)
            try await expectEqual(callThing(connection, "Add", [.int32(1), .int32(1)]).body, [.int32(2)])
        }
    }

    @Test func cancellingTheCallingTaskFailsTheCall() async throws {
        try await withPythonService { _, connection, _ in
            let task = Task { try await callThing(connection, "NeverAnswer") }
            // Wait until the call is on the wire, then cancel.
            while connection.pendingCallCount == 0 { await Task.yield() }
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
            expectEqual(connection.pendingCallCount, 0)
        }
    }

    @Test func theCallbackAPICompletesOnceWithTheReply() async throws {
        try await withPythonService { _, connection, _ in
            let replies = Recorder<[DBusValue]>()
            let (done, finish) = AsyncStream.makeStream(of: Void.self)
            let message = DBusMessage.methodCall(
                destination: "org.example.Thing", path: Self.thing, interface: Self.interface, member: "Add",
                body: [.int32(2), .int32(3)])
            connection.call(message, timeout: .seconds(20)) { result in
                replies.append((try? result.get().body) ?? [])
                finish.yield()
            }
            try await firstElement(of: done)
            expectEqual(replies.elements, [[.int32(5)]])
        }
    }

    // MARK: - Signals

    @Test func aSignalSentBeforeTheReplyReachesTheSubscriberBeforeTheCallReturns() async throws {
        try await withPythonService { _, connection, service in
            let pings = Recorder<DBusMessage>()
            let subscription = try await connection.subscribe(
                to: .signal(sender: service.name, interface: Self.interface, member: "Ping")
            ) { pings.append($0) }
            defer { subscription.cancel() }
            _ = try await callThing(connection, "Emit", [.string("hello")])
            // No waiting: the signal was read before the reply and delivered first.
            let received = pings.elements
            expectEqual(received.count, 1)
            expectEqual(received.first?.body, [.string("hello")])
            expectEqual(received.first?.sender, service.uniqueName)
            expectEqual(received.first?.path, Self.thing)
        }
    }

    @Test func aSubscriptionToAWellKnownSenderIgnoresOtherSenders() async throws {
        try await withPythonService { _, connection, service in
            let fromService = Recorder<String>()
            let fromAnyone = Recorder<String>()
            let rule = DBusMatchRule.signal(interface: Self.interface, member: "Ping")
            var serviceRule = rule
            serviceRule.sender = service.name
            let first = try await connection.subscribe(to: serviceRule) { fromService.append($0.sender ?? "") }
            let second = try await connection.subscribe(to: rule) { fromAnyone.append($0.sender ?? "") }
            defer {
                first.cancel()
                second.cancel()
            }
            // An impostor Ping from this connection, routed back to us before the service's real one.
            try connection.send(
                .signal(path: Self.thing, interface: Self.interface, member: "Ping", body: [.string("fake")]))
            _ = try await callThing(connection, "Emit", [.string("real")])
            expectEqual(fromService.elements, [service.uniqueName])
            expectEqual(fromAnyone.elements, [connection.uniqueName, service.uniqueName])
        }
    }

    @Test func aCancelledSubscriptionReceivesNothing() async throws {
        try await withPythonService { _, connection, _ in
            let pings = Recorder<DBusMessage>()
            let subscription = try await connection.subscribe(
                to: .signal(interface: Self.interface, member: "Ping")
            ) { pings.append($0) }
            _ = try await callThing(connection, "Emit", [.string("one")])
            subscription.cancel()
            _ = try await callThing(connection, "Emit", [.string("two")])
            expectEqual(pings.elements.map(\.body), [[.string("one")]])
        }
    }

    @Test func signalsArriveAsAnAsyncStream() async throws {
        try await withPythonService { _, connection, _ in
            let stream = try await connection.signals(matching: .signal(interface: Self.interface, member: "Ping"))
            _ = try await callThing(connection, "Emit", [.string("streamed")])
            let signal = try await firstElement(of: stream)
            expectEqual(signal.body, [.string("streamed")])
        }
    }

    // MARK: - Losing the connection

    @Test func closingFailsPendingAndLaterCalls() async throws {
        try await withPythonService { _, connection, _ in
            let pending = Task { try await callThing(connection, "NeverAnswer") }
            while connection.pendingCallCount == 0 { await Task.yield() }
            connection.close()
            await #expect(throws: DBusConnectionError.disconnected(reason: "closed by this process")) {
                _ = try await pending.value
            }
            await #expect(throws: DBusConnectionError.disconnected(reason: "closed by this process")) {
                _ = try await callThing(connection, "Add", [.int32(1), .int32(1)])
            }
            expectFalse(connection.isConnected)
        }
    }

    @Test func losingTheBusFailsPendingCallsAndNotifiesDisconnectHandlers() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try await bus.connect()
        defer { connection.close() }
        let service = try PythonService(bus: bus)
        defer { service.stop() }
        let (disconnects, disconnected) = AsyncStream.makeStream(of: DBusConnectionError.self)
        connection.onDisconnect { disconnected.yield($0) }
        let pending = Task { try await callThing(connection, "NeverAnswer") }
        while connection.pendingCallCount == 0 { await Task.yield() }
        bus.daemon.stop()
        let expected = DBusConnectionError.disconnected(reason: "the peer closed the connection")
        await #expect(throws: expected) { _ = try await pending.value }
        try await expectEqual(firstElement(of: disconnects), expected)
        await #expect(throws: expected) { _ = try await connection.listNames() }
    }
}
