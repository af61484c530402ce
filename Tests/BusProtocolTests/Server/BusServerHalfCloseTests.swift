import Foundation
import TestSupport
import Testing

/// One-shot clients (`socat`, `nc -N`, a script): requests, then `shutdown(SHUT_WR)`, then the answers.
struct BusServerHalfCloseTests {
    @Test func aPeerThatStopsWritingGetsEveryAnswerAndThenTheConnectionCloses() async throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        peer.sendHello()
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.wait","params":{"value":5}}"#)
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{"value":6}}"#)
        peer.shutdownWriting()
        // `test.wait` answers only once the gate opens, well after the server has read the end of the input.
        #expect(await offPool { bus.waitsStarted.wait(for: 1) })
        try await Task.sleep(for: .milliseconds(100))
        bus.gate.open()
        let messages = await offPool { peer.readToEnd() }
        let answers = Dictionary(messages.compactMap { message in message["id"].map { ($0, message) } }) { a, _ in a }
        expectEqual(answers[.string("hello")]?["result"]?["server"], .string("testsvc"))
        expectEqual(answers[.int(1)]?["result"]?["value"], .int(5))
        expectEqual(answers[.int(2)]?["result"]?["value"], .int(6))
        expectEqual(messages.count, 3)
        #expect(await offPool { peer.isClosedByServer() })
        expectEqual(bus.cancellations.current, 0, "nothing was cancelled")

        let other = try RawBusPeer(path: bus.socketPath)
        #expect(await offPool { other.greet() }, "the server carries on")
        await bus.shutdown()
    }

    @Test func aPeerThatStopsWritingMidFrameIsAnsweredForItsWholeFramesAndClosed() async throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        peer.sendHello()
        peer.write([0, 0, 0, 50, UInt8(ascii: "{")])  // a frame of 50 bytes, one of them sent
        peer.shutdownWriting()
        let messages = await offPool { peer.readToEnd() }
        expectEqual(messages.map { $0["id"] }, [.string("hello")])
        #expect(await offPool { peer.isClosedByServer() })
        await bus.shutdown()
    }
}
