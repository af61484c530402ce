import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusDBus
@testable import devicesvc

/// The SASL EXTERNAL handshake, as a state machine and over a socket pair with a scripted server.
struct DBusAuthenticatorTests {
    @Test func opensWithNULAndTheHexOfTheDecimalUID() {
        let bytes = DBusAuthenticator(userID: 1000).openingBytes
        expectEqual(bytes, [0] + Array("AUTH EXTERNAL 31303030\r\n".utf8))
    }

    @Test func okFinishesWithBEGINAndTheServerGUID() throws {
        let step = try DBusAuthenticator(userID: 0).step(afterServerLine: "OK 1234abcd")
        expectEqual(step, .finish(send: Array("BEGIN\r\n".utf8), serverGUID: "1234abcd"))
    }

    @Test func dataIsAnsweredWithAnEmptyResponse() throws {
        try expectEqual(DBusAuthenticator(userID: 0).step(afterServerLine: "DATA"), .send(Array("DATA\r\n".utf8)))
    }

    @Test(arguments: ["REJECTED DBUS_COOKIE_SHA1", "ERROR bad", "AGREE_UNIX_FD", "OK", ""])
    func otherAnswersFailAuthentication(line: String) {
        #expect(throws: DBusConnectionError.self) { try DBusAuthenticator(userID: 0).step(afterServerLine: line) }
    }

    @Test func runKeepsBytesTheServerSentAfterOK() throws {
        let (client, server) = try makeSocketPair()
        defer {
            client.close()
            server.close()
        }
        try server.send(Array("OK 0123\r\nlX".utf8))
        let result = try DBusAuthenticator(userID: 0).run(on: client, timeout: .seconds(20))
        expectEqual(result.serverGUID, "0123")
        expectEqual(result.leftover, Array("lX".utf8))
        try expectEqual(receiveAll(from: server), [0] + Array("AUTH EXTERNAL 30\r\nBEGIN\r\n".utf8))
    }

    @Test func runFailsWhenTheServerHangsUp() throws {
        let (client, server) = try makeSocketPair()
        defer { client.close() }
        server.close()
        #expect(throws: DBusConnectionError.self) {
            try DBusAuthenticator(userID: 0).run(on: client, timeout: .seconds(20))
        }
    }

    @Test func runFailsOnAnOverlongLine() throws {
        let (client, server) = try makeSocketPair()
        defer {
            client.close()
            server.close()
        }
        try server.send(Array(repeating: UInt8(ascii: "A"), count: 20_000))
        #expect(throws: DBusConnectionError.authenticationFailed("server line longer than 16384 bytes")) {
            try DBusAuthenticator(userID: 0).run(on: client, timeout: .seconds(20))
        }
    }

    @Test func runFailsWhenTheServerStaysSilent() throws {
        let (client, server) = try makeSocketPair()
        defer {
            client.close()
            server.close()
        }
        #expect(throws: DBusConnectionError.authenticationFailed("no answer from the server within 0.05 seconds")) {
            try DBusAuthenticator(userID: 0).run(on: client, timeout: .milliseconds(50))
        }
    }
}

/// A connected pair of Unix stream sockets, close-on-exec: a process another test spawns meanwhile must not
/// inherit them, or closing one here would not reach the other end as end-of-stream until that process exits.
func makeSocketPair() throws -> (DBusSocket, DBusSocket) {
    var descriptors: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else {
        throw DBusConnectionError.system(operation: "socketpair", errno: errno)
    }
    return (DBusSocket(descriptor: descriptors[0]), DBusSocket(descriptor: descriptors[1]))
}

/// Everything readable from `socket` right now.
func receiveAll(from socket: DBusSocket) throws -> [UInt8] {
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        var poller = pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return received }
        let count = try socket.receive(into: &buffer)
        guard count > 0 else { return received }
        received += buffer[0..<count]
    }
}
