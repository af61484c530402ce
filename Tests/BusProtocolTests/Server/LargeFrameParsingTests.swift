import Dispatch
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

/// Frames of `largeFrameThreshold` bytes or more are parsed off the connection's loop: the loop's other connections
/// are served meanwhile, and the connection's own later frames wait for their turn.
struct LargeFrameParsingTests {
    /// The threshold in these tests: a request with a `text` of 2,000 bytes is large, a bare one is not.
    private static let threshold = 1_024
    private static let padding = String(repeating: "x", count: 2_000)

    /// A server on ONE loop (so that every connection shares the loop a large parse would hold), whose large
    /// parses each wait for `gate`; `parses` records their lengths as they start.
    private struct HeldParses {
        let group: EventLoopGroup
        let bus: TestBus
        let gate = Gate()
        let parses = Recorder<Int>()

        init() throws {
            let group = try EventLoopGroup(loopCount: 1, name: "large-frames")
            let gate = gate
            let parses = parses
            self.group = group
            bus = try TestBus { configuration in
                configuration.eventLoopGroup = group
                configuration.largeFrameThreshold = LargeFrameParsingTests.threshold
                configuration.largeFrameParseHook = { length in
                    parses.append(length)
                    gate.wait()
                }
            }
        }

        func shutDown() async {
            gate.open()
            await bus.shutdown()
            group.shutdown()
        }
    }

    private func echo(id: Int, padded: Bool = false) -> String {
        let text = padded ? #","text":"\#(Self.padding)""# : ""
        return #"{"jsonrpc":"2.0","id":\#(id),"method":"test.echo","params":{"value":\#(id)\#(text)}}"#
    }

    @Test func theLoopServesOtherConnectionsWhileALargeFrameIsParsed() async throws {
        let server = try HeldParses()
        let large = try RawBusPeer(path: server.bus.socketPath)
        let other = try RawBusPeer(path: server.bus.socketPath)
        let answers = await offPool { () -> (Bool, Bool, JSONValue?) in
            guard large.greet() else { return (false, false, nil) }
            large.send(echo(id: 1, padded: true))
            // The parse has started and is held: were it on the loop, the other connection would get no answer.
            let isHeld = server.parses.wait(forCount: 1)
            guard other.greet() else { return (isHeld, false, nil) }
            other.send(echo(id: 7))
            return (isHeld, true, other.readMessage())
        }
        expectTrue(answers.0, "the large frame was not parsed off the loop")
        expectTrue(answers.1, "the other connection's hello was not answered while the large frame was parsed")
        expectEqual(answers.2?["result"]?["value"], .int(7))
        server.gate.open()
        let answer = await offPool { large.readMessage() }
        expectEqual(answer?["result"]?["value"], .int(1))
        expectEqual(answer?["result"]?["text"], .string(Self.padding))
        await server.shutDown()
    }

    @Test func framesBehindALargeOneWaitForItAndKeepTheirOrder() async throws {
        let server = try HeldParses()
        let peer = try RawBusPeer(path: server.bus.socketPath)
        let text = #","text":"\#(Self.padding)""#
        let answered = await offPool { () -> [JSONValue] in
            guard peer.greet() else { return [] }
            // Large, small, large, small in one write: the small ones must not overtake the large ones.
            var bytes: [UInt8] = []
            for (id, isLarge) in [(1, true), (2, false), (3, true), (4, false)] {
                bytes += frame(
                    #"{"jsonrpc":"2.0","id":\#(id),"method":"test.append","params":{"value":\#(id)\#(isLarge ? text : "")}}"#
                )
            }
            peer.write(bytes)
            guard server.parses.wait(forCount: 1) else { return [] }
            server.gate.open()
            return (0..<4).compactMap { _ in peer.readMessage() }
        }
        expectEqual(answered.compactMap { $0["id"]?.intValue }.sorted(), [1, 2, 3, 4])
        let order = server.bus.appended.withLock { $0.values.first ?? [] }
        expectEqual(order, [1, 2, 3, 4])
        expectEqual(server.parses.all.count, 2)
        await server.shutDown()
    }

    @Test func aLargeFrameThatIsNotJSONIsAnsweredWithAParseErrorAndTheConnectionCarriesOn() async throws {
        let server = try HeldParses()
        server.gate.open()
        let peer = try RawBusPeer(path: server.bus.socketPath)
        let answers = await offPool { () -> [JSONValue] in
            guard peer.greet() else { return [] }
            peer.send("{" + String(repeating: "not json ", count: 300))
            peer.send(echo(id: 2))
            return (0..<2).compactMap { _ in peer.readMessage() }
        }
        try #require(answers.count == 2)
        expectEqual(answers[0].errorCode, -32700)
        expectEqual(answers[0]["id"], .null)
        expectEqual(answers[1]["result"]?["value"], .int(2))
        expectEqual(server.parses.all.count, 1)
        await server.shutDown()
    }

    @Test func aBadHeaderBehindALargeFrameIsAnsweredAfterItThenTheConnectionCloses() async throws {
        let server = try HeldParses()
        let peer = try RawBusPeer(path: server.bus.socketPath)
        let result = await offPool { () -> ([JSONValue], Bool) in
            guard peer.greet() else { return ([], false) }
            // A large `bus.ping` (answered on the loop, before the close), then a zero-length frame: a framing error.
            let ping = #"{"jsonrpc":"2.0","id":1,"method":"bus.ping","params":{"text":"\#(Self.padding)"}}"#
            peer.write(frame(ping) + [0, 0, 0, 0])
            guard server.parses.wait(forCount: 1) else { return ([], false) }
            server.gate.open()
            let answers = (0..<2).compactMap { _ in peer.readMessage() }
            return (answers, peer.isClosedByServer())
        }
        try #require(result.0.count == 2)
        expectEqual(result.0[0]["id"], .int(1))
        expectEqual(result.0[0]["result"], .object([:]))
        expectEqual(result.0[1].errorCode, -32600)
        expectEqual(result.0[1]["id"], .null)
        expectTrue(result.1, "the connection stayed open after a framing error")
        await server.shutDown()
    }

    @Test func aPeerThatHangsUpDuringTheParseIsClosedAndTheServerCarriesOn() async throws {
        let server = try HeldParses()
        let leaving = try RawBusPeer(path: server.bus.socketPath)
        let isHeld = await offPool { () -> Bool in
            guard leaving.greet() else { return false }
            leaving.send(echo(id: 1, padded: true))
            return server.parses.wait(forCount: 1)
        }
        expectTrue(isHeld)
        shutdown(leaving.descriptor, Int32(SHUT_RDWR))
        // The server notices the hang-up although the connection's reads are paused.
        let closed = await offPool { () -> Bool in
            let deadline = Date() + 60
            while server.bus.server.connectionCount > 0, Date() < deadline { usleep(1_000) }
            return server.bus.server.connectionCount == 0
        }
        expectTrue(closed, "a connection whose peer hung up during a held parse stayed open")
        server.gate.open()
        let other = try RawBusPeer(path: server.bus.socketPath)
        let answer = await offPool { () -> JSONValue? in
            guard other.greet() else { return nil }
            other.send(echo(id: 5))
            return other.readMessage()
        }
        expectEqual(answer?["result"]?["value"], .int(5))
        await server.shutDown()
    }
}
