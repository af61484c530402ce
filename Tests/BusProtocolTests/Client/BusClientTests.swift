import Dispatch
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusSupport
@testable import ContextBusWire

/// `BusClient` against a real `BusServer`.
struct BusClientTests {
    @Test func connectsSaysHelloAndMakesTypedCalls() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "typed")
        defer { client.close() }
        expectEqual(client.hello?.server, "testsvc")
        expectEqual(client.hello?.peer.pid, getpid())
        let echoed = try await client.call(TestEcho.self, NumberParams(value: 42, text: "hi"))
        expectEqual(echoed, NumberParams(value: 42, text: "hi"))
        _ = try await client.call(BusPing.self)
        expectEqual(bus.server.connections.first?.clientName, "typed")
    }

    @Test func namesThePathWhenNoServiceIsListening() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/store.sock"
        do {
            _ = try await BusClient.connect(to: path, clientName: "lost")
            Issue.record("connected to nothing")
        } catch let error as BusClientError {
            expectEqual(error, .noService(path: path))
            expectEqual(error.description, "no service is listening at \(path)")
            expectEqual(error.rpcError.code, .unavailable)
        }
    }

    @Test func reportsASessionTheServiceRefuses() async throws {
        let bus = try TestBus { $0.access = .init(allowedUserIDs: [geteuid() &+ 4242]) }
        do {
            _ = try await BusClient.connect(to: bus.socketPath, clientName: "intruder")
            Issue.record("the session was accepted")
        } catch let error as BusClientError {
            guard case .rejected(let path, let rpcError) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            expectEqual(path, bus.socketPath)
            expectEqual(rpcError.code, .forbidden)
        }
    }

    @Test func throwsTheServicesErrorsAsRPCErrors() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "errors")
        defer { client.close() }
        await #expect(throws: RPCError.notFound("no such thing", data: .object(["id": .int(7)]))) {
            try await client.call(TestFail.self, NumberParams(value: 0))
        }
        do {
            _ = try await client.call(method: "no.such", params: nil)
            Issue.record("an unknown method answered")
        } catch let error as RPCError {
            expectEqual(error.code, .methodNotFound)
        }
    }

    @Test func pipelinesManyCallsAndMatchesAnswersThatComeInAnyOrder() async throws {
        let bus = try TestBus()
        // The handlers finish in reverse order of the requests: each waits for the one after it.
        let finished = Recorder<Int>()
        let released = Locked<Set<Int>>([])
        bus.server.register(TestEcho.self) { _, params in
            while params.value < 49, !released.withLock({ $0.contains(params.value + 1) }) {
                try await Task.sleep(for: .milliseconds(1))
            }
            released.withLock { _ = $0.insert(params.value) }
            finished.append(params.value)
            return params
        }
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "pipeline")
        defer { client.close() }
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for value in 0..<50 {
                group.addTask {
                    let result = try await client.call(TestEcho.self, NumberParams(value: value))
                    expectEqual(result.value, value, "each call gets its own answer")
                    return 1
                }
            }
            return try await group.reduce(0, +)
        }
        expectEqual(answered, 50)
        expectEqual(finished.all, Array((0..<50).reversed()), "all 50 were in flight at once")
    }

    @Test func signalRequestSendsTheResultAndDisposingItCancelsOnTheServer() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "signals")
        defer { client.close() }
        let result = try await client.request(TestEcho.self, NumberParams(value: 5)).value
        expectEqual(result.value, 5)
        let events = Recorder<String>()
        let disposable = client.request(TestWait.self, NumberParams(value: 1)).start { event in
            events.append(event.description)
        }
        #expect(await offPool { bus.waitsStarted.wait(for: 1) })
        disposable.dispose()
        #expect(await offPool { bus.cancellations.wait(for: 1) }, "disposing sent bus.cancel")
        expectEqual(events.all, ["interrupted"])
        bus.gate.open()
    }

    @Test func signalRequestFailsWithTheServicesError() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "signals")
        defer { client.close() }
        do {
            _ = try await client.request(TestFail.self, NumberParams(value: 0)).value
            Issue.record("the failing request sent a value")
        } catch {
            expectEqual(error.failure?.code, .notFound)
        }
    }

    @Test func cancellingTheCallingTaskSendsBusCancel() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "tasks")
        defer { client.close() }
        let call = Task { try await client.call(TestWait.self, NumberParams(value: 1)) }
        #expect(await offPool { bus.waitsStarted.wait(for: 1) })
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(await offPool { bus.cancellations.wait(for: 1) })
        bus.gate.open()
        _ = try await client.call(BusPing.self)
    }

    @Test func aCallThatTimesOutFailsAndIsCancelledOnTheServer() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "timeouts")
        defer { client.close() }
        await #expect(throws: BusClientError.timedOut(method: "test.wait", after: .milliseconds(30))) {
            try await client.call(TestWait.self, NumberParams(value: 1), timeout: .milliseconds(30))
        }
        #expect(await offPool { bus.cancellations.wait(for: 1) })
        bus.gate.open()
    }

    @Test func callAndWaitBlocksForTheResult() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "blocking")
        defer { client.close() }
        let result = try await Task.detached { try client.callAndWait(TestEcho.self, NumberParams(value: 9)) }.value
        expectEqual(result.value, 9)
    }

    @Test func callAndWaitFailsFastOnTheClientsOwnEventLoop() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "blocking")
        defer { client.close() }
        let outcome = Recorder<String>()
        client.loop.execute {
            do {
                _ = try client.callAndWait(TestEcho.self, NumberParams(value: 1))
                outcome.append("answered")
            } catch {
                outcome.append("\(error)")
            }
        }
        #expect(await offPool { outcome.wait(forCount: 1) })
        expectEqual(outcome.all, ["\(BusClientError.wouldBlockEventLoop(method: "test.echo"))"])
    }

    @Test func failsEveryPendingCallWhenTheConnectionIsLost() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "doomed")
        let calls = (0..<5).map { value in Task { try await client.call(TestWait.self, NumberParams(value: value)) } }
        #expect(await offPool { bus.waitsStarted.wait(for: 5) })
        await bus.server.shutdown(gracefully: false)
        bus.gate.open()
        for call in calls {
            do {
                _ = try await call.value
                Issue.record("a call survived the lost connection")
            } catch let error as BusClientError {
                guard case .disconnected(let path, _) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                expectEqual(path, bus.socketPath)
            }
        }
        guard case .disconnected = client.connectionState else {
            Issue.record("state is \(client.connectionState)")
            return
        }
        await #expect(throws: BusClientError.notConnected(path: bus.socketPath)) {
            try await client.call(BusPing.self)
        }
    }

    @Test func deliversEventsAsSignalsAndStreamsFilteredByMethod() async throws {
        let bus = try TestBus()
        let client = try await BusClient.connect(to: bus.socketPath, clientName: "events")
        let typed = Recorder<TickEvent>()
        let other = Recorder<RPCEvent>()
        let typedDisposable = client.events(TickEvent.self).startWithValues { typed.append($0) }
        let otherDisposable = client.events(method: "something.else").startWithValues { other.append($0) }
        let stream = client.eventStream(method: TickEvent.method)
        _ = try await client.call(TestFlood.self, NumberParams(value: 3, text: "e"))
        #expect(await offPool { typed.wait(forCount: 3) })
        expectEqual(typed.all.map(\.value), [0, 1, 2])
        var streamed: [Int] = []
        for await event in stream {
            streamed.append(Int(event.params["value"]?.intValue ?? -1))
            if streamed.count == 3 { client.close() }  // closing completes the stream
        }
        expectEqual(streamed, [0, 1, 2])
        expectEmpty(other.all)
        typedDisposable.dispose()
        otherDisposable.dispose()
    }

    @Test func manyClientsPipelineConcurrently() async throws {
        let bus = try TestBus()
        let clients = 100
        let callsPerClient = 20
        try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<clients {
                group.addTask {
                    let client = try await BusClient.connect(to: bus.socketPath, clientName: "c\(index)")
                    defer { client.close() }
                    return try await withThrowingTaskGroup(of: Int.self) { calls in
                        for call in 0..<callsPerClient {
                            calls.addTask {
                                let value = index * 1000 + call
                                let result = try await client.call(TestEcho.self, NumberParams(value: value))
                                expectEqual(result.value, value)
                                return 1
                            }
                        }
                        return try await calls.reduce(0, +)
                    }
                }
            }
            let answered = try await group.reduce(0, +)
            expectEqual(answered, clients * callsPerClient)
        }
    }
}
