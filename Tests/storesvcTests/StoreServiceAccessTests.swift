import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport

/// Who may talk to a real `storesvc`: a peer whose uid is not allowed is refused at `bus.hello` with 403 (the
/// client really runs under another uid, through `setpriv`), the socket file has the mode `--socket-mode` names,
/// and the service listens on nothing but its Unix socket.
@Suite(
    .enabled(
        if: PeerAccessProbe.canRunAsAnotherUser,
        "needs to run as root with /usr/bin/setpriv and /usr/bin/python3 to start a client under another uid"))
struct StoreServiceAccessTests {
    /// Starts a service with `arguments`, runs `body` on a thread of its own, and stops the service.
    func withService<T: Sendable>(
        _ arguments: [String], _ body: @escaping @Sendable (StoreServiceProcess) throws -> T
    ) async throws -> T {
        try await onOwnThread {
            let service = try StoreServiceProcess.start(arguments: arguments)
            defer { service.destroy() }
            return try body(service)
        }
    }

    @Test func aPeerWhoseUIDIsNotAllowedIsRefusedWith403AtHello() async throws {
        let line = try await withService(["--socket-mode", "0666", "--allow-uid", "0"]) { service in
            try PeerAccessProbe.helloAsAnotherUser(socketPath: service.socketPath)
        }
        let answer = try JSONParser().parse(Array(line.utf8))
        expectEqual(answer["id"], .int(1))
        expectEqual(answer["error"]?["code"], .int(403), "\(line)")
        expectNil(answer["result"])
    }

    @Test func theSamePeerIsWelcomeOnceItsUIDIsAllowed() async throws {
        let line = try await withService(["--socket-mode", "0666", "--allow-uid", "65534"]) { service in
            try PeerAccessProbe.helloAsAnotherUser(socketPath: service.socketPath)
        }
        let answer = try JSONParser().parse(Array(line.utf8))
        expectEqual(answer["result"]?["peer"]?["uid"], .int(65534), "\(line)")
    }

    @Test func theDefaultSocketModeKeepsOtherUsersFromConnectingAtAll() async throws {
        let (mode, line) = try await withService([]) { service in
            (
                try PeerAccessProbe.mode(of: service.socketPath),
                try PeerAccessProbe.helloAsAnotherUser(socketPath: service.socketPath)
            )
        }
        expectEqual(mode, 0o660)
        expectEqual(line, "connect failed: EACCES")
    }

    @Test(arguments: [("0600", UInt32(0o600)), ("0640", 0o640), ("0666", 0o666)])
    func theSocketFileHasTheModeSocketModeNames(flag: String, mode: UInt32) async throws {
        let actual = try await withService(["--socket-mode", flag]) { service in
            try PeerAccessProbe.mode(of: service.socketPath)
        }
        expectEqual(actual, mode)
    }

    @Test func theServiceListensOnItsUnixSocketAndOnNoTCPOrUDPPort() async throws {
        let (unix, network) = try await withService([]) { service in
            let client = try RawBusConnection(path: service.socketPath)
            try client.hello()
            let inodes = PeerAccessProbe.socketInodes(of: service.pid)
            let unix = PeerAccessProbe.entries(of: "unix", withInodes: inodes)
            // Listening TCP sockets (state 0A) and unconnected UDP ones (07); connected ones a test process
            // might pass on are not the service's doing.
            let network = ["tcp", "tcp6", "udp", "udp6"].flatMap { table in
                PeerAccessProbe.entries(of: table, withInodes: inodes).filter {
                    $0.split(separator: " ").dropFirst(3).first == (table.hasPrefix("tcp") ? "0A" : "07")
                }
            }
            return (unix.filter { $0.hasSuffix(service.socketPath) }, network)
        }
        let listeners = unix.filter { $0.split(separator: " ").dropFirst(3).first == "00010000" }
        expectEqual(listeners.count, 1, "the listening socket is found among the process's sockets: \(unix)")
        expectEqual(network, [], "sockets on IP: \(network)")
    }
}
