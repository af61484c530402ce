import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusServer
@testable import ContextBusTransport
@testable import ContextBusWire

/// The session rules of docs/protocol.md, checked on the wire with a raw socket against a real server.
struct BusServerTests {
    @Test func answersHelloWithTheServersLimitsAndThePeersCredentials() throws {
        let bus = try TestBus { $0.maxInFlight = 77 }
        let peer = try RawBusPeer(path: bus.socketPath)
        peer.sendHello(client: "tester")
        let answer = try #require(peer.readMessage())
        expectEqual(answer["id"], .string("hello"))
        let result = try HelloResult(json: try #require(answer["result"]))
        expectEqual(result.protocolVersion, 1)
        expectEqual(result.server, "testsvc")
        expectEqual(result.version, "1.2.3")
        expectEqual(result.maxFrame, Frame.defaultMaximumLength)
        expectEqual(result.maxInFlight, 77)
        expectEqual(result.peer.uid, geteuid())
        expectEqual(result.peer.pid, getpid())
        expectEqual(bus.server.connections.first?.clientName, "tester")
    }

    @Test func answersPingWithAnEmptyObject() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":5,"method":"bus.ping"}"#)
        let answer = try #require(peer.readMessage())
        expectEqual(answer, json(#"{"jsonrpc":"2.0","id":5,"result":{}}"#))
    }

    @Test(arguments: ["bus.ping", "test.echo", "no.such.method", "bus.cancel"])
    func answers401ToAnythingBeforeHello(method: String) throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":{"value":1}}"#)
        let answer = try #require(peer.readMessage())
        expectEqual(answer["id"], .int(1))
        expectEqual(answer.errorCode, 401)
        // The connection stays usable: hello, then the same request works (or fails for its own reasons).
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["result"], .object([:]))
    }

    @Test func refusesAPeerOutsideTheAccessPolicyWith403AndCloses() throws {
        let bus = try TestBus {
            // Neither this process's user nor its group (root included) is allowed.
            $0.access = .init(allowedUserIDs: [geteuid() &+ 4242], allowedGroupIDs: [getegid() &+ 4242])
        }
        let peer = try RawBusPeer(path: bus.socketPath)
        peer.sendHello()
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.ping"}"#)
        let messages = peer.readToEnd()
        expectEqual(messages.count, 1, "one refusal, and the ping after it is not processed")
        expectEqual(messages.first?["id"], .string("hello"))
        expectEqual(messages.first?.errorCode, 403)
        expectTrue(peer.isClosedByServer())
    }

    @Test func allowsAPeerByItsGroup() throws {
        let bus = try TestBus { $0.access = .init(allowedUserIDs: [], allowedGroupIDs: [getegid()]) }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
    }

    @Test func rejectsAProtocolItDoesNotSpeakWithInvalidParamsNamingTheField() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"bus.hello","params":{"protocol":2,"client":"future"}}"#)
        let answer = try #require(peer.readMessage())
        expectEqual(answer.errorCode, -32602)
        expectEqual(answer["error"]?["data"]?["field"], .string("protocol"))
        // Still no session: other methods keep getting 401.
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?.errorCode, 401)
    }

    @Test func answersAnUnknownMethodWithMethodNotFound() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":"x","method":"store.teleport"}"#)
        let answer = try #require(peer.readMessage())
        expectEqual(answer["id"], .string("x"))
        expectEqual(answer.errorCode, -32601)
        expectEqual(answer["error"]?["data"]?["method"], .string("store.teleport"))
    }

    @Test func answersBadParamsWithInvalidParamsNamingTheField() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":3,"method":"test.echo","params":{"value":"seven"}}"#)
        let answer = try #require(peer.readMessage())
        expectEqual(answer.errorCode, -32602)
        expectEqual(answer["error"]?["data"]?["field"], .string("value"))
        peer.send(#"{"jsonrpc":"2.0","id":4,"method":"bus.cancel","params":{}}"#)
        expectEqual(peer.readMessage()?["error"]?["data"]?["field"], .string("request"))
    }

    @Test func ignoresNotifications() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        // A notification before hello is not answered 401 either: notifications are never answered.
        peer.send(#"{"jsonrpc":"2.0","method":"test.echo","params":{"value":1}}"#)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","method":"bus.ping"}"#)
        peer.send(#"{"jsonrpc":"2.0","id":9,"method":"bus.ping"}"#)
        expectEqual(peer.readMessage()?["id"], .int(9), "the first answer is the ping's")
    }

    @Test func answersARequestIDAlreadyInFlightWithInvalidRequest() throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.greet())
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.wait","params":{"value":1}}"#)
        expectTrue(bus.waitsStarted.wait(for: 1))
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.echo","params":{"value":2}}"#)
        let refusal = try #require(peer.readMessage())
        expectEqual(refusal.errorCode, -32600)
        bus.gate.open()
        expectEqual(peer.readMessage()?["result"]?["value"], .int(1))
    }

    @Test func answersNewRequestsWith503AndLetsInFlightOnesAnswerDuringAGracefulShutdown() async throws {
        let bus = try TestBus()
        let peer = try RawBusPeer(path: bus.socketPath)
        #expect(await offPool { peer.greet() })
        peer.send(#"{"jsonrpc":"2.0","id":1,"method":"test.wait","params":{"value":11}}"#)
        #expect(await offPool { bus.waitsStarted.wait(for: 1) })
        let shutdown = Task { await bus.server.shutdown(gracefully: true, timeout: .seconds(20)) }
        // Wait until the server has stopped accepting: a new connection is refused.
        while FileManager.default.fileExists(atPath: bus.socketPath) { try await Task.sleep(for: .milliseconds(1)) }
        peer.send(#"{"jsonrpc":"2.0","id":2,"method":"test.echo","params":{"value":2}}"#)
        let refusal = try #require(await offPool { peer.readMessage() })
        expectEqual(refusal["id"], .int(2))
        expectEqual(refusal.errorCode, 503)
        bus.gate.open()
        let messages = await offPool { peer.readToEnd() }
        expectEqual(messages.map { $0["result"]?["value"] }, [.int(11)], "the in-flight request answered, then EOF")
        await shutdown.value
    }

    @Test func refusesToStartWhereAnotherServerIsListening() throws {
        let bus = try TestBus()
        var configuration = BusServer.Configuration(name: "second", version: "0", socketPath: bus.socketPath)
        configuration.socketActivation = nil
        let second = BusServer(configuration: configuration)
        #expect(throws: ListenerError.addressInUse(path: bus.socketPath)) { try second.start() }
    }

    @Test func closesAConnectionThatDoesNotSayHelloInTime() throws {
        let bus = try TestBus { $0.helloTimeout = .milliseconds(20) }
        let peer = try RawBusPeer(path: bus.socketPath)
        expectTrue(peer.isClosedByServer())
    }
}
