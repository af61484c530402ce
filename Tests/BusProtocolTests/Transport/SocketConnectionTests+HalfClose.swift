import Dispatch
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusTransport

/// A peer that shuts down its writing side (`shutdown(SHUT_WR)`) and then reads.
struct SocketConnectionHalfCloseTests {
    /// A started connection whose handler answers every byte read with that byte plus one, and records the end
    /// of the peer's input; the other end is a raw, blocking descriptor.
    private func makeAnsweringPair(
        on loop: EventLoop
    ) throws -> (SocketConnection, ConnectionProbe, Occurrence, FileDescriptor) {
        let (local, peer) = try FileDescriptor.makeSocketPair()
        RawPeer.setBlocking(peer)
        let connection = SocketConnection(adopting: local, on: loop)
        let probe = ConnectionProbe()
        let inputEnded = Occurrence()
        var handlers = probe.handlers
        let record = handlers.onRead
        handlers.onRead = { bytes in
            record(bytes)
            connection.write(bytes.map { $0 &+ 1 })
        }
        handlers.onEndOfInput = { inputEnded.fire() }
        connection.start(handlers)
        return (connection, probe, inputEnded, peer)
    }

    @Test func withAnEndOfInputHandlerTheConnectionStillWritesAfterThePeerStopsWriting() throws {
        try withLoop { loop in
            let (connection, probe, inputEnded, peer) = try makeAnsweringPair(on: loop)
            RawPeer.write(peer, [1, 2, 3])
            shutdown(peer.rawValue, Int32(SHUT_WR))
            expectTrue(inputEnded.wait(), "onEndOfInput was called")
            expectEqual(probe.bytes, [1, 2, 3])
            expectEqual(probe.closeReasons, [], "the connection stays open")
            connection.write([42])
            connection.closeAfterFlushing([43])
            expectEqual(RawPeer.readToEnd(peer), [2, 3, 4, 42, 43], "the answers, the later writes, then end of file")
            expectEqual(probe.waitForClose(), .localClose)
        }
    }

    @Test func aPeerThatThenClosesEntirelyClosesTheConnectionWithEndOfFile() throws {
        try withLoop { loop in
            let (_, probe, inputEnded, peer) = try makeAnsweringPair(on: loop)
            shutdown(peer.rawValue, Int32(SHUT_WR))
            expectTrue(inputEnded.wait())
            peer.close()
            expectEqual(probe.waitForClose(), .endOfFile)
        }
    }

    @Test func withoutTheHandlerEndOfFileClosesAtOnce() throws {
        try withLoop { loop in
            let (_, probe, peer) = try makeConnectedPair(on: loop)
            RawPeer.write(peer, [7])
            shutdown(peer.rawValue, Int32(SHUT_WR))
            expectEqual(probe.waitForClose(), .endOfFile)
            expectEqual(probe.bytes, [7])
            expectEqual(RawPeer.readToEnd(peer), [])
        }
    }
}
