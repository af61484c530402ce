import Foundation
import TestSupport
import Testing

/// Malformed frames and messages, written byte by byte on a raw socket.
struct BusServerHostileInputTests {
    @Test func answersNonJSONWithParseErrorAndKeepsTheConnectionOpen() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.write(frame("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": "))
        peer.write(frame([0xFF, 0xFE, 0x7B]))
        for _ in 0..<2 {
            let answer = try #require(peer.readMessage())
            expectEqual(answer["id"], .null)
            expectEqual(answer.errorCode, -32700)
        }
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["result"], .object([:]), "the framing is intact, so the session goes on")
    }

    @Test(arguments: [#"[{"jsonrpc":"2.0","id":1,"method":"bus.ping"}]"#, "[]"])
    func answersABatchWithInvalidRequest(batch: String) throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(batch)
        let answer = try #require(peer.readMessage())
        expectEqual(answer["id"], .null)
        expectEqual(answer.errorCode, -32600)
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .int(2))
    }

    @Test(arguments: [
        #"{"jsonrpc":"1.0","id":1,"method":"bus.ping"}"#, #"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":7}"#, #"{"jsonrpc":"2.0","id":1,"method":"bus.ping","params":[]}"#,
    ])
    func answersMessagesThatAreNotRequestsWithInvalidRequest(message: String) throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(message)
        let answer = try #require(peer.readMessage())
        expectEqual(answer["id"], .int(1))
        expectEqual(answer.errorCode, -32600)
    }

    @Test func sendsOneErrorThenClosesOnAZeroLengthFrameAndProcessesNothingAfterIt() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        // A ping before the bad header is answered; the one after it is not.
        peer.write(
            frame(#"{"jsonrpc":"2.0","id":1,"method":"bus.ping"}"#) + [0, 0, 0, 0]
                + frame(#"{"jsonrpc":"2.0","id":2,"method":"bus.ping"}"#))
        let messages = peer.readToEnd()
        expectEqual(messages.count, 2)
        expectEqual(messages.first?["id"], .int(1))
        expectEqual(messages.last?["id"], .null)
        expectEqual(messages.last?.errorCode, -32600)
        expectTrue(peer.isClosedByServer())
    }

    @Test func sendsOneErrorThenClosesOnAFrameAboveTheMaximumWithoutWaitingForItsBody() throws {
        let bus = try TestBus { $0.maxFrame = 1024 }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        // Announces 1025 bytes and sends only a few: the error must not wait for the rest.
        peer.write([0, 0, 0x04, 0x01] + Array("{\"jsonrpc\"".utf8))
        let messages = peer.readToEnd()
        expectEqual(messages.count, 1)
        expectEqual(messages.first?["id"], .null)
        expectEqual(messages.first?.errorCode, -32600)
        expectTrue(peer.isClosedByServer())
    }

    @Test func acceptsAFrameExactlyAtTheMaximum() throws {
        let bus = try TestBus { $0.maxFrame = 200 }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        let prefix = #"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":1,"text":""#
        let padding = String(repeating: "a", count: 200 - prefix.utf8.count - 3)
        let message = prefix + padding + "\"}}"
        expectEqual(message.utf8.count, 200)
        peer.send(message)
        expectEqual(peer.readMessage()?["result"]?["text"], .string(padding))
    }

    @Test func handlesRequestsSplitAcrossWritesAndSeveralInOneWrite() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        let bytes = (1...3).flatMap { frame(#"{"jsonrpc":"2.0","id":\#($0),"method":"bus.ping"}"#) }
        for byte in bytes { peer.write([byte]) }
        let ids = (0..<3).compactMap { _ in peer.readMessage()?["id"] }
        expectEqual(ids, [.int(1), .int(2), .int(3)])
    }

    @Test func survivesAPeerThatClosesMidFrameAndKeepsServingOthers() throws {
        let bus = try TestBus()
        do {
            let quitter = try RawBusPeer(path: bus.socketPath)
            expectTrue(quitter.greet())
            quitter.write([0, 0, 0, 50] + Array("{\"jsonrpc".utf8))
        }  // closed here, mid-frame
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .int(1))
    }
}
