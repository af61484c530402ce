import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusWire

/// Losing the service and getting it back.
struct BusClientReconnectTests {
    @Test func reconnectsAfterTheServerRestartsOnTheSamePathAndCallsOnReconnect() async throws {
        let bus = try TestBus()
        var options = BusClient.Options(reconnect: .init(initialDelay: .milliseconds(5), maxDelay: .milliseconds(50)))
        options.connectTimeout = .seconds(5)
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "phoenix", options: options)
        defer { client.close() }
        let states = Recorder<BusClient.ConnectionState>()
        let stateDisposable = client.stateChanges.startWithValues { states.append($0) }
        let reconnected = Recorder<HelloResult>()
        client.onReconnect { hello in reconnected.append(hello) }
        let events = Recorder<TickEvent>()
        let eventDisposable = client.events(TickEvent.self).startWithValues { events.append($0) }
        _ = try await client.call(BusPing.self)
        // `stateChanges` reads the current state on the client's state queue: wait for that first value, or a
        // busy host may let the shutdown below come first (the first state seen would then be `.reconnecting`).
        #expect(await offPool { states.wait(forCount: 1) })

        await bus.shutdown(gracefully: true)
        let restarted = try bus.restarted { $0.helloTimeout = nil }
        #expect(await offPool { reconnected.wait(forCount: 1) })
        expectEqual(reconnected.all.first?.server, "testsvc")
        expectTrue(client.connectionState.isConnected)
        let echoed = try await client.call(TestEcho.self, NumberParams(value: 3))
        expectEqual(echoed.value, 3)
        expectEqual(restarted.server.connections.first?.clientName, "phoenix", "hello was said again")
        // Event observers started before the loss keep receiving on the new connection.
        _ = try await client.call(TestFlood.self, NumberParams(value: 2))
        #expect(await offPool { events.wait(forCount: 2) })

        // The states are delivered on the client's state queue, so the last one may still be on its way.
        let isReconnecting: @Sendable (BusClient.ConnectionState) -> Bool = {
            if case .reconnecting = $0 { true } else { false }
        }
        #expect(await offPool { states.wait { $0.contains(where: isReconnecting) && $0.last?.isConnected == true } })
        let seen = states.all
        expectEqual(seen.first?.isConnected, true)
        expectTrue(seen.contains(where: isReconnecting))
        expectEqual(seen.last?.isConnected, true)
        stateDisposable.dispose()
        eventDisposable.dispose()
        await restarted.shutdown()
    }

    @Test func givesUpAfterTheLastAttemptAndReportsWhy() async throws {
        let bus = try TestBus()
        let options = BusClient.Options(
            reconnect: .init(initialDelay: .milliseconds(1), maxDelay: .milliseconds(2), maxAttempts: 3))
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "quitter", options: options)
        let final = Recorder<BusClient.ConnectionState>()
        let disposable = client.stateChanges.start { event in
            if case .completed = event { final.append(client.connectionState) }
        }
        await bus.shutdown(gracefully: true)
        #expect(await offPool { final.wait(forCount: 1) }, "the state signal completes on the final state")
        guard case .disconnected(let reason) = final.all.first else {
            Issue.record("final state \(String(describing: final.all.first))")
            return
        }
        expectTrue(reason.contains("after 3 attempts"))
        expectTrue(reason.contains(bus.socketPath))
        disposable.dispose()
    }

    @Test func callsWhileReconnectingFailAtOnceWithNotConnected() async throws {
        let bus = try TestBus()
        let options = BusClient.Options(reconnect: .init(initialDelay: .seconds(60), maxDelay: .seconds(60)))
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "patient", options: options)
        defer { client.close() }
        let reconnecting = Gate()
        let disposable = client.stateChanges.startWithValues { state in
            if case .reconnecting = state { reconnecting.open() }
        }
        await bus.shutdown(gracefully: true)
        #expect(await offPool { reconnecting.wait() })
        await #expect(throws: BusClientError.notConnected(path: bus.socketPath)) {
            try await client.call(BusPing.self)
        }
        disposable.dispose()
    }

    @Test func backoffDoublesUpToTheMaximum() {
        let policy = BusClient.ReconnectPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(300))
        let delays = (1...6).map { policy.delay(beforeAttempt: $0) }
        expectEqual(delays, [50, 100, 200, 300, 300, 300].map { Duration.milliseconds($0) })
    }
}
