import Dispatch
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusDBus
@testable import ContextBusSupport
@testable import devicesvc

/// The connection against a scripted peer on a socket pair: out-of-order replies, unknown serials, incoming
/// calls, and a peer that breaks the protocol or hangs up mid-message.
struct DBusConnectionPeerTests {
    /// The peer side of a socket pair.
    ///
    /// `@unchecked Sendable`: a test uses its peer from one task at a time, and the blocking reads run one at a
    /// time on the peer's serial queue (off the cooperative pool, which a blocked read could starve).
    final class Peer: @unchecked Sendable {
        let socket: DBusSocket
        private var reader = DBusMessageReader()
        private let queue = DispatchQueue(label: "peer")

        init(socket: DBusSocket) {
            self.socket = socket
            socket.setReceiveTimeout(.seconds(60))
        }

        func nextMessage() async throws -> DBusMessage {
            try await withLockedThrowingContinuation { continuation in
                queue.async { continuation.resume(with: Result { try self.readMessage() }) }
            }
        }

        private func readMessage() throws -> DBusMessage {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                if let message = try reader.nextMessage() { return message }
                let count = try socket.receive(into: &buffer)
                guard count > 0 else { throw DBusConnectionError.disconnected(reason: "connection side closed") }
                reader.append(buffer[0..<count])
            }
        }

        func send(_ message: DBusMessage, serial: UInt32) throws {
            var message = message
            message.serial = serial
            try socket.send(try message.encoded())
        }
    }

    private func makeConnection() throws -> (DBusConnection, Peer) {
        let (mine, theirs) = try makeSocketPair()
        return (DBusConnection(socket: mine, serverGUID: "peer", initialBytes: []), Peer(socket: theirs))
    }

    private func call(_ member: String) -> DBusMessage {
        .methodCall(destination: nil, path: .root, interface: "org.example.Peer", member: member)
    }

    @Test func matchesRepliesThatArriveOutOfOrderBySerial() async throws {
        let (connection, peer) = try makeConnection()
        defer {
            connection.close()
            peer.socket.close()
        }
        let first = Task { try await connection.call(call("First"), timeout: .seconds(60)) }
        let firstCall = try await peer.nextMessage()
        let second = Task { try await connection.call(call("Second"), timeout: .seconds(60)) }
        let calls = [firstCall, try await peer.nextMessage()]
        for (index, incoming) in calls.reversed().enumerated() {
            try peer.send(
                .methodReturn(to: incoming, body: [.string(incoming.member ?? "")]), serial: UInt32(index + 1))
        }
        try await expectEqual(first.value.body, [.string("First")])
        try await expectEqual(second.value.body, [.string("Second")])
    }

    @Test func dropsRepliesToUnknownSerials() async throws {
        let (connection, peer) = try makeConnection()
        defer {
            connection.close()
            peer.socket.close()
        }
        let answered = Task { try await connection.call(call("Real"), timeout: .seconds(60)) }
        let incoming = try await peer.nextMessage()
        var stray = DBusMessage.methodReturn(to: incoming, body: [.string("stray")])
        stray.replySerial = 999
        try peer.send(stray, serial: 1)
        try peer.send(.methodReturn(to: incoming, body: [.string("real")]), serial: 2)
        try await expectEqual(answered.value.body, [.string("real")])
        expectTrue(connection.isConnected)
    }

    @Test func answersPingAndRefusesOtherIncomingCalls() async throws {
        let (connection, peer) = try makeConnection()
        defer {
            connection.close()
            peer.socket.close()
        }
        var ping = DBusMessage.methodCall(
            destination: nil, path: .root, interface: "org.freedesktop.DBus.Peer", member: "Ping")
        ping.sender = ":1.1"
        try peer.send(ping, serial: 7)
        let pong = try await peer.nextMessage()
        expectTrue(pong.kind == .methodReturn && pong.replySerial == 7)
        var other = call("Unexported")
        other.sender = ":1.1"
        try peer.send(other, serial: 8)
        let refusal = try await peer.nextMessage()
        expectTrue(refusal.kind == .error && refusal.replySerial == 8 && refusal.errorName == DBusError.unknownMethod)
    }

    @Test func aPeerThatBreaksTheProtocolFailsPendingCalls() async throws {
        let (connection, peer) = try makeConnection()
        defer {
            connection.close()
            peer.socket.close()
        }
        let pending = Task { try await connection.call(call("Any"), timeout: .seconds(60)) }
        _ = try await peer.nextMessage()
        try peer.socket.send(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        await #expect(throws: DBusConnectionError.protocolViolation(.invalidByteOrder(UInt8(ascii: "H")))) {
            _ = try await pending.value
        }
        expectFalse(connection.isConnected)
    }

    @Test func aPeerThatHangsUpMidMessageFailsPendingCalls() async throws {
        let (connection, peer) = try makeConnection()
        defer { connection.close() }
        let pending = Task { try await connection.call(call("Any"), timeout: .seconds(60)) }
        let incoming = try await peer.nextMessage()
        var reply = DBusMessage.methodReturn(to: incoming, body: [.string("cut short")])
        reply.serial = 1
        try peer.socket.send(Array(try reply.encoded().prefix(20)))
        peer.socket.close()
        await #expect(throws: DBusConnectionError.disconnected(reason: "the peer closed the connection")) {
            _ = try await pending.value
        }
    }

    @Test func aMessageThatCannotBeEncodedFailsOnlyItsCall() async throws {
        let (connection, peer) = try makeConnection()
        defer {
            connection.close()
            peer.socket.close()
        }
        let bad = DBusMessage.methodCall(
            destination: nil, path: .root, interface: "org.example.Peer", member: "Bad",
            body: [.array(.int32, [.string("not an int")])])
        await #expect(throws: DBusConnectionError.invalidMessage(.typeMismatch(expected: "i", actual: "s"))) {
            _ = try await connection.call(bad, timeout: .seconds(60))
        }
        expectTrue(connection.isConnected)
    }
}
