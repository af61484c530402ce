import Dispatch
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

/// Listener options that ignore the test process's own environment.
func listenerOptions(socketMode: UInt32 = 0o660) -> UnixListener.Options {
    UnixListener.Options(socketMode: socketMode, socketActivation: nil)
}

/// Starts an echo server: every accepted connection writes back what it reads.
func startEchoServer(
    at address: UnixSocketAddress, group: EventLoopGroup, options: UnixListener.Options = listenerOptions()
) throws -> UnixListener {
    try UnixListener.listen(on: address, group: group, options: options) { connection in
        connection.start(.init(onRead: { bytes in connection.write(bytes) }))
    }
}

/// Leaves a socket file at `path` with nothing listening: what a crashed service leaves behind.
func makeStaleSocket(at address: UnixSocketAddress) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var storage = sockaddr_un()
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in
        raw.copyBytes(from: Array(address.path.utf8) + [0])
    }
    let bound = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(bound == 0, "bind failed: errno \(errno)")
    close(fd)
}

struct UnixListenerTests {
    @Test func echoesToTwoHundredConcurrentClientsOnOneLoop() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup(loops: 1) { group in
            let address = try directory.address()
            let listener = try startEchoServer(at: address, group: group)
            defer { listener.close() }
            let clients = 200
            let probes = (0..<clients).map { _ in ConnectionProbe() }
            let connections = try (0..<clients).map { index in
                let connection = try SocketConnection.connect(to: address, on: group.loops[0])
                connection.start(probes[index].handlers)
                return connection
            }
            let messages = (0..<clients).map { patternBytes(count: 100 + $0, seed: UInt32($0) + 1) }
            DispatchQueue.concurrentPerform(iterations: clients) { index in
                _ = connections[index].write(messages[index])
            }
            for index in 0..<clients {
                expectTrue(probes[index].wait { $0.bytes.count >= messages[index].count })
                expectEqual(probes[index].bytes, messages[index], "client \(index) got its own bytes back")
            }
            for connection in connections { connection.close() }
        }
    }

    @Test func spreadsAcceptedConnectionsOverTheGroupsLoops() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup(loops: 2) { group in
            let address = try directory.address()
            let loopsSeen = Locked<[ObjectIdentifier]>([])
            let accepted = DispatchSemaphore(value: 0)
            let listener = try UnixListener.listen(on: address, group: group, options: listenerOptions()) {
                connection in
                let onItsLoop = connection.loop.inEventLoop
                loopsSeen.withLock { $0.append(ObjectIdentifier(connection.loop)) }
                expectTrue(onItsLoop, "onAccept runs on the connection's own loop")
                connection.close()
                accepted.signal()
            }
            defer { listener.close() }
            let clients = try (0..<4).map { _ in try SocketConnection.connect(to: address, on: group.loops[0]) }
            for _ in clients { expectEqual(accepted.wait(timeout: .now() + patience), .success) }
            expectEqual(Set(loopsSeen.withLock { $0 }).count, 2)
        }
    }

    @Test func reportsThisProcessAsThePeerOfAnAcceptedConnection() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup { group in
            let address = try directory.address()
            let credentials = Locked<PeerCredentials?>(nil)
            let accepted = Occurrence()
            let listener = try UnixListener.listen(on: address, group: group, options: listenerOptions()) {
                connection in
                credentials.withLock { $0 = try? connection.peerCredentials() }
                connection.close()
                accepted.fire()
            }
            defer { listener.close() }
            let client = try SocketConnection.connect(to: address, on: group.loops[0])
            expectTrue(accepted.wait())
            expectEqual(
                credentials.withLock { $0 },
                PeerCredentials?(PeerCredentials(uid: getuid(), gid: getgid(), pid: getpid())))
            try expectEqual(client.peerCredentials(), PeerCredentials(uid: getuid(), gid: getgid(), pid: getpid()))
            client.close()
        }
    }

    @Test func createsAMissingDirectoryWithMode0700() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup { group in
            let address = try UnixSocketAddress(path: directory.path + "/run/ctxbus/store.sock")
            let listener = try startEchoServer(at: address, group: group)
            defer { listener.close() }
            expectEqual(fileMode(directory.path + "/run"), 0o700)
            expectEqual(fileMode(directory.path + "/run/ctxbus"), 0o700)
        }
    }

    @Test func leavesAnExistingDirectoryAsItIs() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        expectEqual(chmod(directory.path, 0o751), 0)
        try withGroup { group in
            let listener = try startEchoServer(at: try directory.address(), group: group)
            defer { listener.close() }
            expectEqual(fileMode(directory.path), 0o751)
        }
    }

    @Test(arguments: [UInt32(0o660), 0o600, 0o666])
    func givesTheSocketFileTheConfiguredMode(mode: UInt32) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup { group in
            let address = try directory.address()
            let listener = try startEchoServer(at: address, group: group, options: listenerOptions(socketMode: mode))
            defer { listener.close() }
            expectEqual(fileType(address.path), UInt32(S_IFSOCK))
            expectEqual(fileMode(address.path), mode)
        }
    }

    @Test func replacesAStaleSocketFile() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address()
        try makeStaleSocket(at: address)
        #expect(throws: ConnectError.connectionRefused(path: address.path)) {
            try withLoop { loop in try SocketConnection.connect(to: address, on: loop) }
        }
        try withGroup { group in
            let listener = try startEchoServer(at: address, group: group)
            defer { listener.close() }
            let client = try SocketConnection.connect(to: address, on: group.loops[0])
            let probe = ConnectionProbe()
            client.start(probe.handlers)
            client.write([7, 7])
            expectTrue(probe.wait { $0.bytes == [7, 7] })
            client.close()
        }
    }

    @Test func refusesToStartWhereAnotherListenerAnswers() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup { group in
            let address = try directory.address()
            let first = try startEchoServer(at: address, group: group)
            defer { first.close() }
            #expect(throws: ListenerError.addressInUse(path: address.path)) {
                try startEchoServer(at: address, group: group)
            }
            // The live socket is still there and still answers.
            let client = try SocketConnection.connect(to: address, on: group.loops[0])
            client.close()
        }
    }

    @Test func refusesARegularFileAtThePathAndLeavesItUntouched() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address()
        let contents = Data("precious".utf8)
        expectTrue(FileManager.default.createFile(atPath: address.path, contents: contents))
        try withGroup { group in
            #expect(throws: ListenerError.pathOccupied(path: address.path, kind: "a file of another kind")) {
                try startEchoServer(at: address, group: group)
            }
        }
        expectEqual(FileManager.default.contents(atPath: address.path), contents)
    }

    @Test func refusesADirectoryAtThePath() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address()
        expectEqual(mkdir(address.path, 0o700), 0)
        try withGroup { group in
            #expect(throws: ListenerError.pathOccupied(path: address.path, kind: "a directory")) {
                try startEchoServer(at: address, group: group)
            }
        }
        expectEqual(fileType(address.path), UInt32(S_IFDIR))
    }

    @Test func refusesAParentThatIsNotADirectory() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        expectTrue(FileManager.default.createFile(atPath: directory.path + "/file", contents: Data()))
        let address = try UnixSocketAddress(path: directory.path + "/file/bus.sock")
        try withGroup { group in
            #expect(throws: ListenerError.parentNotDirectory(path: directory.path + "/file")) {
                try startEchoServer(at: address, group: group)
            }
        }
    }

    @Test func removesTheSocketFileOnClose() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup { group in
            let address = try directory.address()
            let listener = try startEchoServer(at: address, group: group)
            expectEqual(fileType(address.path), UInt32(S_IFSOCK))
            listener.close()
            expectNil(fileType(address.path))
            listener.close()  // idempotent
            #expect(throws: ConnectError.noSuchSocket(path: address.path)) {
                try SocketConnection.connect(to: address, on: group.loops[0])
            }
        }
    }

    @Test func leavesASuccessorsSocketFileAlone() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try withGroup { group in
            let address = try directory.address()
            let first = try startEchoServer(at: address, group: group)
            // Someone removes the file and a new instance takes the path.
            expectEqual(unlink(address.path), 0)
            let second = try startEchoServer(at: address, group: group)
            defer { second.close() }
            first.close()
            expectEqual(
                fileType(address.path), UInt32(S_IFSOCK), "the first listener must not remove the second's file")
        }
    }

    @Test func namesThePathWhenNothingListens() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address("absent.sock")
        try withLoop { loop in
            #expect(throws: ConnectError.noSuchSocket(path: address.path)) {
                try SocketConnection.connect(to: address, on: loop)
            }
        }
        expectTrue(ConnectError.noSuchSocket(path: address.path).description.contains(address.path))
    }
}
