import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusServer
@testable import ContextBusWire

/// Handlers: where they run, how they answer, the in-flight limit, cancellation and ordering.
struct BusServerRequestTests {
    @Test func answers429BeyondTheInFlightLimitAndServesAgainOnceRequestsAnswered() throws {
        let bus = try TestBus { $0.maxInFlight = 2 }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        for id in 1...2 { peer.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.wait","params":{"value":\#(id)}}"#) }
        expectTrue(bus.waitsStarted.wait(for: 2))
        peer.send(#"{"jsonrpc":"2.0","id":3,"method":"test.echo","params":{"value":3}}"#)
        let refusal = try #require(peer.readMessage())
        expectEqual(refusal["id"], .int(3))
        expectEqual(refusal.errorCode, 429)
        expectEqual(refusal["error"]?["data"]?["limit"], .int(2))
        // Session methods are answered on the loop and never count against the limit.
        peer.send(#"{"jsonrpc":"2.0","id":4,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .int(4))
        bus.gate.open()
        let answered = Set((0..<2).compactMap { _ in peer.readMessage()?["id"] })
        expectEqual(answered, [.int(1), .int(2)])
        peer.send(#"{"jsonrpc":"2.0","id":5,"method":"test.echo","params":{"value":5}}"#)
        expectEqual(peer.readMessage()?["result"]?["value"], .int(5))
    }

    /// Found by the power-cut rounds (issue 28): the answer used to be written before its request left the in-flight
    /// table, so a client reusing the id at once (as JSON-RPC allows) was now and then refused with `-32600`.
    @Test func anIDReusedAsSoonAsItsAnswerArrivesIsNeverFoundInFlight() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        var refusals: [String] = []
        for value in 1...2_000 {
            peer.send(#"{"jsonrpc":"2.0","id":7,"method":"test.echo","params":{"value":\#(value)}}"#)
            let answer = try #require(peer.readMessage())
            if answer["result"]?["value"] != .int(Int64(value)) { refusals.append("\(answer)") }
        }
        expectEqual(refusals, [])
    }

    @Test func cancelAnswers499AtOnceAndTheHandlerSeesTheCancellation() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":"slow","method":"test.wait","params":{"value":1}}"#)
        expectTrue(bus.waitsStarted.wait(for: 1))
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.cancel","params":{"request":"slow"}}"#)
        let first = try #require(peer.readMessage())
        let second = try #require(peer.readMessage())
        expectEqual(first["id"], .string("slow"))
        expectEqual(first.errorCode, 499)
        expectEqual(second, json(#"{"jsonrpc":"2.0","id":2,"result":{}}"#))
        expectTrue(bus.cancellations.wait(for: 1))
        // The handler's own late answer is dropped: the next message is the ping's.
        bus.gate.open()
        peer.send(#"{"jsonrpc":"2.0","id":3,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .int(3))
    }

    @Test func cancellingAFinishedOrUnknownRequestOnlyAnswersTheCancel() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":1}}"#)
        expectEqual(peer.readMessage()?["result"]?["value"], .int(1))
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.cancel","params":{"request":1}}"#)
        peer.send(#"{"jsonrpc":"2.0","id":3,"method":"bus.cancel","params":{"request":"never"}}"#)
        expectEqual(peer.readMessage(), json(#"{"jsonrpc":"2.0","id":2,"result":{}}"#))
        expectEqual(peer.readMessage(), json(#"{"jsonrpc":"2.0","id":3,"result":{}}"#))
    }

    @Test func cooperativeCancellationLetsARunningHandlerAnswerWithItsOwnData() throws {
        let bus = try TestBus()
        let started = Gate()
        bus.server.register(
            TestWait.self, cancellation: .cooperative,
            responder: { request, params, responder in
                request.onCancel {
                    responder.fail(RPCError.cancelled("chain cancelled", data: .object(["step": .int(2)])))
                }
                started.open()
            })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.wait","params":{"value":1}}"#)
        expectTrue(started.wait())
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.cancel","params":{"request":1}}"#)
        let messages = [try #require(peer.readMessage()), try #require(peer.readMessage())]
        let cancelled = try #require(messages.first { $0["id"] == .int(1) })
        expectEqual(cancelled.errorCode, 499)
        expectEqual(cancelled["error"]?["data"]?["step"], .int(2), "the handler's answer, not the server's")
    }

    @Test func asyncHandlersSeeTaskCancellationAndACancellationErrorIsAnswered499() throws {
        let bus = try TestBus()
        let started = Gate()
        let observed = Gate()
        bus.server.register(TestWait.self, cancellation: .cooperative) { request, params in
            started.open()
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(1)) }
            observed.open()
            throw CancellationError()
        }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.wait","params":{"value":1}}"#)
        expectTrue(started.wait())
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.cancel","params":{"request":1}}"#)
        expectTrue(observed.wait())
        let messages = [try #require(peer.readMessage()), try #require(peer.readMessage())]
        expectEqual(messages.first { $0["id"] == .int(1) }?.errorCode, 499)
    }

    @Test func answersHandlerErrorsWithoutLeakingTheirDetails() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.fail","params":{"value":0}}"#)
        let rpcFailure = try #require(peer.readMessage())
        expectEqual(rpcFailure.errorCode, 404)
        expectEqual(rpcFailure["error"]?["data"]?["id"], .int(7))
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"test.fail","params":{"value":1}}"#)
        let plainFailure = try #require(peer.readMessage())
        expectEqual(plainFailure, json(#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"internal error"}}"#))
        expectTrue(bus.handlerErrors.wait(forCount: 1))
        expectEqual(bus.handlerErrors.all.first?.contains("PlainFailure"), true, "the operator is told the details")
    }

    @Test func answersInternalErrorWhenAResponderIsReleasedWithoutAnswering() throws {
        let bus = try TestBus()
        bus.server.register(TestEcho.self, responder: { _, _, _ in })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":1}}"#)
        expectEqual(peer.readMessage()?.errorCode, -32603)
        expectTrue(bus.handlerErrors.wait(forCount: 1))
    }

    @Test func answersInternalErrorForAResultThatCannotBeEncoded() throws {
        let bus = try TestBus()
        bus.server.register(StoreHistory.self) { _, _ in
            throw RPCError(code: .notFound, message: "nan", data: .double(.nan))
        }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"store.history","params":{}}"#)
        expectEqual(peer.readMessage()?.errorCode, -32603)
    }

    @Test func runsInOrderRequestsOfOneConnectionInArrivalOrderWhileOtherRequestsRunBesideThem() throws {
        let bus = try TestBus()
        let count = 300
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        // A concurrent request that blocks until the ordered ones are done: if it held up the connection's
        // other requests, they would never run and the gate would never open.
        peer.send(#"{"jsonrpc":"2.0","id":"waiter","method":"test.wait","params":{"value":0}}"#)
        expectTrue(bus.waitsStarted.wait(for: 1))
        var pipeline: [UInt8] = []
        for value in 1...count {
            pipeline += frame(#"{"jsonrpc":"2.0","id":\#(value),"method":"test.append","params":{"value":\#(value)}}"#)
        }
        peer.write(pipeline)
        var answered: [RPCID] = []
        for _ in 1...count {
            let message = try #require(peer.readMessage())
            answered.append(try #require(message["id"].flatMap(RPCID.init(json:))))
        }
        bus.gate.open()
        expectEqual(peer.readMessage()?["id"], .string("waiter"))
        let log = bus.appended.withLock { $0.values.first ?? [] }
        expectEqual(log, Array(1...count))
        expectEqual(answered, (1...count).map { RPCID.number(Int64($0)) })
    }

    @Test func keepsEachConnectionsOrderSeparateAcrossConnections() throws {
        let bus = try TestBus()
        let peers = try (0..<4).map { _ in try RawBusPeer(path: bus.socketPath) }
        for peer in peers { expectTrue(peer.greet()) }
        let count = 100
        for (index, peer) in peers.enumerated() {
            var pipeline: [UInt8] = []
            for value in 1...count {
                let tagged = index * 1000 + value
                pipeline += frame(
                    #"{"jsonrpc":"2.0","id":\#(value),"method":"test.append","params":{"value":\#(tagged)}}"#)
            }
            peer.write(pipeline)
        }
        for peer in peers {
            for _ in 1...count { _ = peer.readMessage() }
        }
        let logs = bus.appended.withLock { $0 }
        expectEqual(logs.count, 4)
        for log in logs.values {
            let base = (log.first ?? 0) / 1000 * 1000
            expectEqual(log, (1...count).map { base + $0 })
        }
    }

    @Test func anInOrderResponderThatReturnsBeforeAnsweringLetsTheNextOneStart() throws {
        let bus = try TestBus()
        let responders = Recorder<Responder<TestAppend>>()
        bus.server.register(
            TestAppend.self, ordering: .inOrder,
            responder: { _, _, responder in
                responders.append(responder)  // hand the work on; answer later
            })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        for id in 1...3 {
            peer.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.append","params":{"value":\#(id)}}"#)
        }
        expectTrue(responders.wait(forCount: 3), "all three started although none has answered")
        for responder in responders.all.reversed() {
            responder.succeed(NumberParams(value: Int(responder.request.id.description) ?? -1))
        }
        let ids = (0..<3).compactMap { _ in peer.readMessage()?["id"] }
        expectEqual(ids, [.int(3), .int(2), .int(1)])
    }

    @Test func aRequestCancelledWhileWaitingForItsTurnNeverRuns() throws {
        let bus = try TestBus()
        let ran = Recorder<Int>()
        let first = Gate()
        bus.server.register(
            TestAppend.self, ordering: .inOrder, cancellation: .cooperative,
            responder: {
                _, params, responder in
                ran.append(params.value)
                if params.value == 1 { first.wait() }
                responder.succeed(params)
            })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.append","params":{"value":1}}"#)
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"test.append","params":{"value":2}}"#)
        expectTrue(ran.wait(forCount: 1))
        peer.send(#"{"jsonrpc":"2.0","id":3,"method":"bus.cancel","params":{"request":2}}"#)
        let cancelled = try #require(peer.readMessage())
        expectEqual(cancelled["id"], .int(2))
        expectEqual(cancelled.errorCode, 499)
        expectEqual(peer.readMessage()?["id"], .int(3))
        first.open()
        expectEqual(peer.readMessage()?["id"], .int(1))
        peer.send(#"{"jsonrpc":"2.0","id":4,"method":"test.append","params":{"value":4}}"#)
        expectEqual(peer.readMessage()?["id"], .int(4))
        expectEqual(ran.all, [1, 4], "request 2 never ran")
    }

    @Test func closingAConnectionCancelsItsRequestsAndRunsItsCloseHooks() throws {
        let bus = try TestBus()
        let closed = Gate()
        let lifetimeEnded = Gate()
        bus.server.register(TestEcho.self) { request, params in
            request.connection.onClose { _ in closed.open() }
            request.connection.lifetime.observeEnded { lifetimeEnded.open() }
            return params
        }
        do {
            let peer = try RawBusPeer(path: bus.socketPath)
            expectTrue(peer.greet())
            peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":1}}"#)
            expectNotNil(peer.readMessage())
            peer.send(#"{"jsonrpc":"2.0","id":2,"method":"test.wait","params":{"value":2}}"#)
            expectTrue(bus.waitsStarted.wait(for: 1))
        }  // the peer goes away with test.wait in flight
        expectTrue(closed.wait())
        expectTrue(lifetimeEnded.wait())
        expectTrue(bus.cancellations.wait(for: 1), "the in-flight request saw its cancellation")
        bus.gate.open()
    }
}
