import Dispatch
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusTransport

/// A started connection on one end of a socket pair; the other end is a raw, blocking descriptor.
func makeConnectedPair(
    on loop: EventLoop, options: SocketConnection.Options = .init()
) throws -> (SocketConnection, ConnectionProbe, FileDescriptor) {
    let (local, peer) = try FileDescriptor.makeSocketPair()
    RawPeer.setBlocking(peer)
    let connection = SocketConnection(adopting: local, on: loop, options: options)
    let probe = ConnectionProbe()
    connection.start(probe.handlers)
    return (connection, probe, peer)
}

struct SocketConnectionTests {
    @Test func handsReadBytesToTheHandlerInOrder() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            let payload = patternBytes(count: 300_000)
            RawPeer.write(peer, payload)
            expectTrue(probe.wait { $0.bytes.count >= payload.count })
            expectEqual(probe.bytes, payload)
            connection.close()
        }
    }

    @Test func deliversAPartialFrameThenEndOfFileWhenThePeerClosesMidFrame() throws {
        try withLoop { loop in
            let (_, probe, peer) = try makeConnectedPair(on: loop)
            RawPeer.write(peer, [0, 0, 1])  // three bytes of a four-byte length prefix
            peer.close()
            expectEqual(probe.waitForClose(), .endOfFile)
            expectEqual(probe.bytes, [0, 0, 1])
        }
    }

    @Test func reportsThePeerCredentialsOfThisProcess() throws {
        try withLoop { loop in
            let (connection, _, peer) = try makeConnectedPair(on: loop)
            let credentials = try connection.peerCredentials()
            expectEqual(credentials, PeerCredentials(uid: getuid(), gid: getgid(), pid: getpid()))
            connection.close()
            withExtendedLifetime(peer) {}
        }
    }

    @Test func refusesPeerCredentialsOnceClosed() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            connection.close()
            expectEqual(probe.waitForClose(), .localClose)
            #expect(throws: SystemError.self) { try connection.peerCredentials() }
            withExtendedLifetime(peer) {}
        }
    }

    @Test func callsOnCloseExactlyOnceForRepeatedCloses() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in connection.close() }
            expectEqual(probe.waitForClose(), .localClose)
            // A later event cannot produce a second call: flush the loop, then look again.
            let flushed = Occurrence()
            loop.execute { flushed.fire() }
            expectTrue(flushed.wait())
            expectEqual(probe.closeReasons, [.localClose])
            expectEmpty(RawPeer.readToEnd(peer), "the peer sees end of file")
        }
    }

    @Test func refusesWritesAfterClose() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            expectTrue(connection.write([1, 2, 3]))
            connection.close()
            expectFalse(connection.write([4]))
            expectFalse(connection.isOpen)
            expectEqual(probe.waitForClose(), .localClose)
            expectEqual(RawPeer.readToEnd(peer), [1, 2, 3])
        }
    }

    @Test func closesWithTheLoopWhenTheLoopShutsDown() throws {
        let loop = try EventLoop(name: "owner")
        let (_, probe, peer) = try makeConnectedPair(on: loop)
        loop.shutdown()
        expectEqual(probe.closeReasons, [.loopShutdown])
        expectEmpty(RawPeer.readToEnd(peer))
    }

    @Test func reportsCloseForAConnectionStartedAfterItClosed() throws {
        try withLoop { loop in
            let (local, peer) = try FileDescriptor.makeSocketPair()
            let connection = SocketConnection(adopting: local, on: loop)
            connection.close()
            let probe = ConnectionProbe()
            connection.start(probe.handlers)
            expectEqual(probe.waitForClose(), .localClose)
            withExtendedLifetime(peer) {}
        }
    }

    @Test func reportsCloseForAConnectionStartedAfterTheLoopFinishedClosingIt() throws {
        try withLoop { loop in
            let (local, peer) = try FileDescriptor.makeSocketPair()
            let connection = SocketConnection(adopting: local, on: loop)
            connection.close()
            // The loop runs the close's work (closing the descriptor) before `start` installs the handlers.
            let flushed = Occurrence()
            loop.execute { flushed.fire() }
            expectTrue(flushed.wait())
            let probe = ConnectionProbe()
            connection.start(probe.handlers)
            expectEqual(probe.waitForClose(), .localClose)
            // Exactly once: flush the loop again and look.
            let flushedAgain = Occurrence()
            loop.execute { flushedAgain.fire() }
            expectTrue(flushedAgain.wait())
            expectEqual(probe.closeReasons, [.localClose])
            expectEmpty(RawPeer.readToEnd(peer), "the peer sees end of file")
        }
    }

    @Test func closesWithAnErrorAndNoSIGPIPEWhenThePeerGoesAwayMidWrite() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(
                on: loop, options: .init(maxOutboundBytes: 16 << 20))
            expectTrue(connection.write(patternBytes(count: 8 << 20)))
            expectGreaterThan(connection.outboundByteCount, 0, "more than a socket buffer, so part of it is queued")
            _ = RawPeer.read(peer, count: 1000)
            peer.close()
            // The process is still alive (MSG_NOSIGNAL) and the connection reports why it closed.
            let reason = try #require(probe.waitForClose())
            guard case .error(let error) = reason else {
                Issue.record("expected an error close, got \(reason)")
                return
            }
            expectTrue([EPIPE, ECONNRESET].contains(error.errno))
            expectEqual(connection.outboundByteCount, 0, "the queue is released")
        }
    }
}
