import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusWire

/// Calls made while the client reconnects, with `callsWhileReconnecting = .wait`: held until the service is back.
struct BusClientHeldCallTests {
    /// A client that waits with its calls, connected to `bus`, which is then shut down: returns once the client
    /// is reconnecting.
    private func clientLosingItsService(
        _ bus: TestBus, name: String, reconnect: BusClient.ReconnectPolicy? = nil
    ) async throws -> BusClient {
        var options = BusClient.Options(
            reconnect: reconnect ?? .init(initialDelay: .milliseconds(5), maxDelay: .milliseconds(50)))
        options.callsWhileReconnecting = .wait
        let client = try await BusClient.connect(to: bus.socketPath, clientName: name, options: options)
        let reconnecting = Gate()
        let disposable = client.stateChanges.startWithValues { state in
            if case .reconnecting = state { reconnecting.open() }
        }
        await bus.shutdown(gracefully: true)
        #expect(await offPool { reconnecting.wait() })
        disposable.dispose()
        return client
    }

    @Test func aCallMadeWhileReconnectingIsSentOnceTheServiceIsBack() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "patient")
        defer { client.close() }
        let answered = Gate()
        let call = Task {
            defer { answered.open() }
            return try await client.call(TestEcho.self, NumberParams(value: 7))
        }
        try await Task.sleep(for: .milliseconds(100))
        expectFalse(answered.isOpen, "the call was answered while no service was there")

        let restarted = try bus.restarted()
        expectEqual(try await call.value.value, 7)
        expectEqual(restarted.server.connections.first?.clientName, "patient")
        await restarted.shutdown()
    }

    @Test func heldCallsAreSentInTheOrderTheyWereMade() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "orderly")
        defer { client.close() }
        let answers = Recorder<Int>()
        // Starting a request's signal makes the call at once, so these are made in this order.
        let disposables = (0..<5).map { value in
            client.request(TestAppend.self, NumberParams(value: value)).start { event in
                if case .value(let echoed) = event { answers.append(echoed.value) }
                if case .failed = event { answers.append(-1) }
            }
        }
        let restarted = try bus.restarted()
        #expect(await offPool { answers.wait(forCount: 5) })
        expectEqual(answers.all.sorted(), [0, 1, 2, 3, 4])
        expectEqual(restarted.appended.withLock { $0.values.first ?? [] }, [0, 1, 2, 3, 4])
        for disposable in disposables { disposable.dispose() }
        await restarted.shutdown()
    }

    @Test func aHeldCallWhoseTimeoutPassesFailsWithTimedOutAndIsNeverSent() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "hasty")
        defer { client.close() }
        await #expect(throws: BusClientError.timedOut(method: TestAppend.name, after: .milliseconds(50))) {
            try await client.call(TestAppend.self, NumberParams(value: 1), timeout: .milliseconds(50))
        }
        let restarted = try bus.restarted()
        // Sent after the connection is back: the service runs `test.append` in order, so an earlier one would be
        // in the log before this one.
        expectEqual(try await client.call(TestAppend.self, NumberParams(value: 2)).value, 2)
        expectEqual(restarted.appended.withLock { $0.values.first ?? [] }, [2])
        await restarted.shutdown()
    }

    @Test func heldCallsThatTimeOutLeaveTheQueue() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "outage")
        defer { client.close() }
        for value in 0..<20 {
            await #expect(throws: BusClientError.self) {
                try await client.call(TestAppend.self, NumberParams(value: value), timeout: .milliseconds(5))
            }
        }
        // A long outage with calls that keep timing out must not collect them.
        expectEqual(client.state.withLock { $0.heldCalls.count }, 0)
    }

    @Test func cancellingAHeldCallFailsItAtOnceAndItIsNeverSent() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "fickle")
        defer { client.close() }
        let call = Task { try await client.call(TestAppend.self, NumberParams(value: 1)) }
        try await Task.sleep(for: .milliseconds(50))
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        let restarted = try bus.restarted()
        expectEqual(try await client.call(TestAppend.self, NumberParams(value: 2)).value, 2)
        expectEqual(restarted.appended.withLock { $0.values.first ?? [] }, [2])
        await restarted.shutdown()
    }

    @Test func heldCallsFailWithNotConnectedWhenTheClientGivesUp() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(
            bus, name: "quitter",
            reconnect: .init(initialDelay: .milliseconds(300), maxDelay: .milliseconds(300), maxAttempts: 3))
        await #expect(throws: BusClientError.notConnected(path: bus.socketPath)) {
            try await client.call(BusPing.self)
        }
        guard case .disconnected = client.connectionState else {
            Issue.record("the client is \(client.connectionState), not disconnected")
            return
        }
    }

    @Test func heldCallsFailWithClosedWhenTheClientIsClosed() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "closer")
        let call = Task { try await client.call(BusPing.self) }
        try await Task.sleep(for: .milliseconds(50))
        client.close()
        await #expect(throws: BusClientError.closed(path: bus.socketPath)) { try await call.value }
    }

    @Test func aBlockingCallWaitsForTheServiceToo() async throws {
        let bus = try TestBus()
        let client = try await clientLosingItsService(bus, name: "blocker")
        defer { client.close() }
        let answer = Task { await offPool { try? client.callAndWait(TestEcho.self, NumberParams(value: 9)).value } }
        try await Task.sleep(for: .milliseconds(50))
        let restarted = try bus.restarted()
        expectEqual(await answer.value, 9)
        await restarted.shutdown()
    }
}
