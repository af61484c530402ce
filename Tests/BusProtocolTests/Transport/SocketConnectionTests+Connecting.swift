@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

/// A listening socket with the smallest backlog that never accepts: after one pending connection, connects get
/// `EAGAIN`.
func makeListenerThatNeverAccepts(at address: UnixSocketAddress) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var storage = sockaddr_un()
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in raw.copyBytes(from: Array(address.path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(bound == 0 && listen(fd, 0) == 0, "listener setup failed: errno \(errno)")
    return fd
}

struct SocketConnectionConnectingTests {
    @Test func reportsABusyListenerAfterRetryingUntilTheTimeout() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address()
        let listener = makeListenerThatNeverAccepts(at: address)
        defer { close(listener) }
        try withLoop { loop in
            var pending: [SocketConnection] = []
            var failure: ConnectError?
            // Fill the backlog; the connect that finds it full must fail, not hang.
            for _ in 0..<8 {
                do throws(ConnectError) {
                    pending.append(try SocketConnection.connect(to: address, on: loop, timeout: .milliseconds(30)))
                } catch {
                    failure = error
                    break
                }
            }
            expectFalse(pending.isEmpty, "the first connection waits in the backlog")
            expectEqual(failure, .listenerBusy(path: address.path))
            for connection in pending { connection.close() }
        }
    }

    @Test func failsAtOnceOnALoopThreadWhenTheBacklogIsFull() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address()
        let listener = makeListenerThatNeverAccepts(at: address)
        defer { close(listener) }
        try withLoop { loop in
            let first = try SocketConnection.connect(to: address, on: loop)
            defer { first.close() }
            let outcome = Locked<Result<Void, ConnectError>?>(nil)
            let done = Occurrence()
            loop.execute {
                // A long timeout: on the loop thread it must not be used for waiting.
                let result = Result { () throws(ConnectError) in
                    for _ in 0..<8 { _ = try SocketConnection.connect(to: address, on: loop, timeout: .seconds(600)) }
                }
                outcome.withLock { $0 = result }
                done.fire()
            }
            expectTrue(done.wait())
            #expect(throws: ConnectError.listenerBusy(path: address.path)) {
                try outcome.withLock { $0 }?.get()
            }
        }
    }

    @Test func treatsAListenerWithAFullBacklogAsAliveNotStale() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let address = try directory.address()
        let listener = makeListenerThatNeverAccepts(at: address)
        defer { close(listener) }
        try withGroup { group in
            var pending: [SocketConnection] = []
            while let connection = try? SocketConnection.connect(to: address, on: group.loops[0], timeout: .zero) {
                pending.append(connection)
            }
            #expect(throws: ListenerError.addressInUse(path: address.path)) {
                try startEchoServer(at: address, group: group)
            }
            expectEqual(fileType(address.path), UInt32(S_IFSOCK), "the live socket was not removed")
            for connection in pending { connection.close() }
        }
    }
}
