import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusWire

/// What handlers do with a connection: events, overflow of a peer that stops reading, paced sending.
struct BusConnectionTests {
    @Test func sendsEventsBeforeTheResultInTheOrderTheyWereSent() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.flood","params":{"value":3,"text":"t"}}"#)
        let messages = (0..<4).compactMap { _ in peer.readMessage() }
        expectEqual(messages.count, 4)
        expectEqual(messages.prefix(3).map { $0["method"] }, Array(repeating: .string("test.tick"), count: 3))
        expectEqual(messages.prefix(3).map { $0["params"]?["value"] }, [.int(0), .int(1), .int(2)])
        expectTrue(messages.prefix(3).allSatisfy { $0["id"] == nil })
        expectEqual(messages.last?["result"]?["value"], .int(3))
    }

    @Test func sendsBatchedEncodedEventsBeforeTheResultInTheOrderTheyWereQueued() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        let count = 200
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.floodBatched","params":{"value":\#(count),"text":"b"}}"#)
        let messages = (0...count).compactMap { _ in peer.readMessage() }
        expectEqual(messages.count, count + 1)
        expectEqual(messages.prefix(count).map { $0["params"]?["value"]?.intValue }, (0..<count).map { Int64($0) })
        expectTrue(messages.prefix(count).allSatisfy { $0["method"] == .string("test.tick") && $0["id"] == nil })
        expectEqual(messages.last?["result"]?["value"], .int(Int64(count)))
    }

    @Test func dropsAPeerThatStopsReadingBatchedEventsWithOverflow() throws {
        let bus = try TestBus {
            $0.maxOutbound = 64 * 1024
            $0.overflowGoodbyeTimeout = .seconds(20)  // the stalled peer gets time to read the goodbye
        }
        let stalled = try RawBusPeer(path: bus.socketPath)
        expectTrue(stalled.greet())
        let lively = try RawBusPeer(path: bus.socketPath)
        expectTrue(lively.greet())
        let text = String(repeating: "x", count: 1000)
        stalled.send(
            #"{"jsonrpc":"2.0","id":1,"method":"test.floodBatched","params":{"value":100000,"text":"\#(text)"}}"#)
        for id in 1...20 {
            lively.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.echo","params":{"value":\#(id)}}"#)
            expectEqual(lively.readMessage()?["result"]?["value"], .int(Int64(id)))
        }
        let messages = stalled.readToEnd()
        let ticks = messages.filter { $0["method"] == .string("test.tick") }
        expectTrue(ticks.count > 10 && ticks.count < 100000)
        expectEqual(ticks.map { $0["params"]?["value"]?.intValue }, (0..<ticks.count).map { Int64($0) })
        expectEqual(messages.last?["method"], .string("bus.overflow"))
        expectFalse(messages.contains { $0["id"] == .int(1) }, "the flood's own answer was dropped with the rest")
    }

    @Test func dropsAPeerThatStopsReadingWithOverflowWhileAnotherKeepsWorking() throws {
        let bus = try TestBus {
            $0.maxOutbound = 64 * 1024
            $0.overflowGoodbyeTimeout = .seconds(20)  // the stalled peer gets time to read the goodbye
        }
        let stalled = try RawBusPeer(path: bus.socketPath)
        expectTrue(stalled.greet())
        let lively = try RawBusPeer(path: bus.socketPath)
        expectTrue(lively.greet())
        let closed = Gate()
        bus.server.connections.first?.onClose { _ in closed.open() }
        // Far more than the socket buffers and the queue hold; the handler never blocks on the full queue.
        let text = String(repeating: "x", count: 1000)
        stalled.send(#"{"jsonrpc":"2.0","id":1,"method":"test.flood","params":{"value":100000,"text":"\#(text)"}}"#)
        // Meanwhile the other client is served as usual.
        for id in 1...100 {
            lively.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"test.echo","params":{"value":\#(id)}}"#)
            expectEqual(lively.readMessage()?["result"]?["value"], .int(Int64(id)))
        }
        let messages = stalled.readToEnd()
        expectTrue(closed.wait())
        let ticks = messages.filter { $0["method"] == .string("test.tick") }
        expectTrue(ticks.count > 10 && ticks.count < 100000)
        expectEqual(ticks.map { $0["params"]?["value"]?.intValue }, (0..<ticks.count).map { Int64($0) })
        let goodbye = try #require(messages.last)
        expectEqual(goodbye["method"], .string("bus.overflow"))
        expectGreaterThanOrEqual((goodbye["params"]?["dropped"]?.intValue ?? 0), 1)
        expectFalse(messages.contains { $0["id"] == .int(1) }, "the flood's own answer was dropped with the rest")
        expectEqual(bus.server.connectionCount, 1)
    }

    @Test func pacesALongReplaySoAPeerThatKeepsReadingIsNeverDropped() throws {
        let bus = try TestBus {
            $0.maxOutbound = 64 * 1024
            $0.pacingThreshold = 16 * 1024
        }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        // 4 MB through a 64 KiB queue: 60 times what would overflow it without pacing.
        let text = String(repeating: "r", count: 1000)
        let count = 4000
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.replay","params":{"value":\#(count),"text":"\#(text)"}}"#)
        var values: [Int64] = []
        while values.count < count {
            let message = try #require(peer.readMessage())
            try #require(message["method"] == .string("test.tick"), "got \(message) instead of an event")
            values.append(message["params"]?["value"]?.intValue ?? -1)
            if values.count % 500 == 0 { usleep(2000) }  // a reader that is sometimes slow
        }
        expectEqual(values, (0..<count).map { Int64($0) })
        expectEqual(peer.readMessage()?["result"]?["value"], .int(Int64(count)))
    }

    @Test func pacesEventsPulledFromASource() throws {
        let bus = try TestBus {
            $0.maxOutbound = 32 * 1024
            $0.pacingThreshold = 8 * 1024
        }
        let count = 3000
        let finished = Recorder<Bool>()
        bus.server.register(
            TestReplay.self,
            responder: { request, params, responder in
                let next = Locked(0)
                let text = params.text
                responder.succeed(NumberParams(value: params.value))
                request.connection.sendPaced(
                    from: {
                        let value = next.withLock { value -> Int in
                            defer { value += 1 }
                            return value
                        }
                        return value < params.value ? RPCEvent(TickEvent(value: value, text: text)) : nil
                    },
                    completion: { finished.append($0) })
            })
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        let text = String(repeating: "p", count: 500)
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.replay","params":{"value":\#(count),"text":"\#(text)"}}"#)
        expectEqual(peer.readMessage()?["result"]?["value"], .int(Int64(count)), "the result comes before the events")
        let values = (0..<count).compactMap { _ in peer.readMessage()?["params"]?["value"]?.intValue }
        expectEqual(values, (0..<count).map { Int64($0) })
        expectTrue(finished.wait(forCount: 1))
        expectEqual(finished.all, [true])
    }

    @Test func toldAWaitingPacedSenderThatTheConnectionClosed() throws {
        let bus = try TestBus {
            $0.maxOutbound = 32 * 1024
            $0.pacingThreshold = 1024
        }
        let outcome = Recorder<Bool>()
        bus.server.register(
            TestReplay.self,
            responder: { request, params, responder in
                responder.succeed(params)
                let text = String(repeating: "z", count: 2000)
                request.connection.sendPaced(
                    from: { RPCEvent(TickEvent(value: 0, text: text)) },  // endless
                    completion: { outcome.append($0) })
            })
        do {
            let peer = try RawBusPeer(path: bus.socketPath)
            expectTrue(peer.greet())
            peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.replay","params":{"value":1}}"#)
            expectEqual(peer.readMessage()?["id"], .int(1))
        }  // goes away without reading the events
        expectTrue(outcome.wait(forCount: 1))
        expectEqual(outcome.all, [false])
    }
}
