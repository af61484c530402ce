import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusServer

/// `HandlerPlacement`: responder handlers on the connection's loop, on the handler queue, or chosen per request.
struct HandlerPlacementTests {
    /// Registers `test.echo` as a responder that answers `value` and records whether it ran on the loop.
    private func echoRecordingPlacement(
        on bus: TestBus, ordering: HandlerOrdering = .concurrent, placement: HandlerPlacement<NumberParams>
    ) -> Recorder<Bool> {
        let ranOnLoop = Recorder<Bool>()
        bus.server.register(
            TestEcho.self, ordering: ordering, placement: placement,
            responder: { request, params, responder in
                ranOnLoop.append(request.connection.loop.inEventLoop)
                responder.succeed(params)
            })
        return ranOnLoop
    }

    @Test func anEventLoopHandlerRunsOnTheConnectionsLoopAndAnswers() throws {
        let bus = try TestBus()
        let ranOnLoop = echoRecordingPlacement(on: bus, placement: .eventLoop)
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        for id in 1...3 { peer.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.echo","params":{"value":\#(id)}}"#) }
        for id in 1...3 { expectEqual(peer.readMessage()?["result"]?["value"], .int(Int64(id))) }
        expectEqual(ranOnLoop.all, [true, true, true])
    }

    @Test func theDefaultPlacementRunsOnTheHandlerQueueNotTheLoop() throws {
        let bus = try TestBus()
        let ranOnLoop = echoRecordingPlacement(on: bus, placement: .handlerQueue)
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":1}}"#)
        expectEqual(peer.readMessage()?["result"]?["value"], .int(1))
        expectEqual(ranOnLoop.all, [false])
    }

    @Test func aConditionalPlacementSendsRequestsThatFailItToTheHandlerQueue() throws {
        let bus = try TestBus()
        let ranOnLoop = echoRecordingPlacement(on: bus, placement: .eventLoop(when: { $0.value < 10 }))
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        for (id, value) in [(1, 5), (2, 50), (3, 9)] {
            peer.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.echo","params":{"value":\#(value)}}"#)
            expectEqual(peer.readMessage()?["result"]?["value"], .int(Int64(value)))
        }
        expectEqual(ranOnLoop.all, [true, false, true])
    }

    @Test func badParamsOfAnEventLoopHandlerAreAnsweredWithoutCallingIt() throws {
        let bus = try TestBus()
        let ranOnLoop = echoRecordingPlacement(on: bus, placement: .eventLoop)
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":"not a number"}}"#)
        let answer = try #require(peer.readMessage())
        expectEqual(answer["id"], .int(1))
        expectEqual(answer.errorCode, -32602)
        // The connection carries on.
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{"value":2}}"#)
        expectEqual(peer.readMessage()?["result"]?["value"], .int(2))
        expectEqual(ranOnLoop.all, [true])
    }

    @Test func inOrderRequestsKeepArrivalOrderAcrossPlacements() throws {
        let bus = try TestBus()
        let log = Recorder<Int>()
        let gate = bus.gate
        // Values of 100 and more go to the handler queue and wait for the gate: the loop's later requests must
        // wait for their turn instead of overtaking them.
        bus.server.register(
            TestAppend.self, ordering: .inOrder, placement: .eventLoop(when: { $0.value < 100 }),
            responder: { _, params, responder in
                if params.value >= 100 { _ = gate.wait() }
                log.append(params.value)
                responder.succeed(params)
            })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        let values = [1, 2, 100, 3, 4, 101, 5]
        var pipeline: [UInt8] = []
        for (id, value) in values.enumerated() {
            pipeline += frame(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.append","params":{"value":\#(value)}}"#)
        }
        peer.write(pipeline)
        expectEqual(peer.readMessage()?["result"]?["value"], .int(1))
        expectEqual(peer.readMessage()?["result"]?["value"], .int(2))
        // The rest is held up behind 100 until the gate opens (a ping still gets through: the loop is free).
        peer.send(#"{"jsonrpc":"2.0","id":"ping","method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .string("ping"))
        expectEqual(log.all, [1, 2])
        gate.open()
        for value in values.dropFirst(2) { expectEqual(peer.readMessage()?["result"]?["value"], .int(Int64(value))) }
        expectEqual(log.all, values)
    }
}
