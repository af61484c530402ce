import Dispatch
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusTransport

/// `SocketConnection.writeBatched(_:)`: bytes queued for the loop, sent together.
struct SocketConnectionBatchedWritingTests {
    @Test func sendsSeveralBatchedWritesFromTheLoopIntactAndInOrder() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            let frames = (0..<40).map { patternBytes(count: 100 + $0 * 37, seed: UInt32($0) + 1) }
            try whileHolding(loop) {
                for frame in frames { expectTrue(connection.writeBatched(frame)) }
                expectEqual(connection.outboundByteCount, frames.reduce(0) { $0 + $1.count })
                expectEqual(RawPeer.availableBytes(peer), 0, "nothing is sent from the calling thread")
            }
            let expected = frames.flatMap { $0 }
            expectEqual(RawPeer.read(peer, count: expected.count), expected)
            expectTrue(probe.wait { $0.drains >= 1 }, "the loop's send drains the queue and says so")
            expectEqual(connection.outboundByteCount, 0)
            connection.close()
        }
    }

    @Test func keepsOrderWhenDirectWritesFollowBatchedOnes() throws {
        try withLoop { loop in
            let (connection, _, peer) = try makeConnectedPair(on: loop)
            let pieces = (0..<6).map { patternBytes(count: 500 + $0, seed: UInt32($0) + 11) }
            try whileHolding(loop) {
                for (index, piece) in pieces.enumerated() {
                    expectTrue(index.isMultiple(of: 2) ? connection.writeBatched(piece) : connection.write(piece))
                }
                expectEqual(RawPeer.availableBytes(peer), 0, "a direct write waits behind the batched bytes")
            }
            let expected = pieces.flatMap { $0 }
            expectEqual(RawPeer.read(peer, count: expected.count), expected)
            connection.close()
        }
    }

    @Test func finishesALargeBatchedWriteOnceTheSlowPeerReads() throws {
        try withLoop { loop in
            let size = 8 << 20
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: 16 << 20))
            let payload = patternBytes(count: size, seed: 5)
            expectTrue(connection.writeBatched(payload))
            // The loop's send fills the socket buffer; the rest must wait for EPOLLOUT, in small reads.
            let received = RawPeer.read(peer, count: size, chunk: 4096)
            expectEqual(received.count, size)
            expectEqual(received, payload)
            expectTrue(probe.wait { $0.drains >= 1 })
            expectEqual(connection.outboundByteCount, 0)
            connection.close()
        }
    }

    @Test func refusesBatchedWritesPastTheLimitAndReportsTheOverflowOnce() throws {
        try withLoop { loop in
            let limit = 256 * 1024
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: limit))
            let chunk = [UInt8](repeating: 0x5A, count: 4096)
            var accepted = 0
            while connection.writeBatched(chunk) {
                accepted += 1
                expectLessThan(accepted, 10_000, "the queue must stop growing")
                if accepted >= 10_000 { return }
            }
            expectTrue(probe.wait { !$0.overflows.isEmpty })
            let overflow = try #require(probe.overflows.first)
            expectEqual(overflow.limit, limit)
            expectEqual(overflow.refusedBytes, chunk.count)
            expectLessThanOrEqual(connection.outboundByteCount, limit)
            expectFalse(connection.writeBatched([1]), "after an overflow nothing more is accepted")
            expectFalse(connection.write([1]))
            connection.close()
            expectEqual(probe.waitForClose(), .localClose)
            expectEqual(probe.overflows.count, 1)
            _ = peer
        }
    }

    @Test func takesABurstPastTheQueueLimitThatTheSocketStillTakes() throws {
        try withLoop { loop in
            // A reading peer is not dropped because its loop has not run yet: only bytes the socket refused count.
            let limit = 32 * 1024
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: limit))
            let frames = (0..<12).map { patternBytes(count: 8 * 1024, seed: UInt32($0) + 31) }
            try whileHolding(loop) {
                for frame in frames { expectTrue(connection.writeBatched(frame)) }
                expectLessThanOrEqual(connection.outboundByteCount, limit)
            }
            let expected = frames.flatMap { $0 }
            expectEqual(RawPeer.read(peer, count: expected.count), expected)
            expectEmpty(probe.overflows)
            connection.close()
        }
    }

    @Test func refusesBatchedWritesAfterClose() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            connection.close()
            expectFalse(connection.writeBatched([1, 2, 3]))
            expectEqual(probe.waitForClose(), .localClose)
            expectEmpty(RawPeer.readToEnd(peer))
        }
    }

    @Test func sendsBatchedBytesQueuedBeforeAGracefulClose() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop)
            let payload = patternBytes(count: 10_000, seed: 21)
            let goodbye = Array("goodbye".utf8)
            try whileHolding(loop) {
                expectTrue(connection.writeBatched(payload))
                connection.closeAfterFlushing(goodbye, timeout: .seconds(30))
                expectFalse(connection.writeBatched([0]), "no writes while draining")
            }
            expectEqual(RawPeer.readToEnd(peer), payload + goodbye)
            expectEqual(probe.waitForClose(), .localClose)
        }
    }
}

extension RawPeer {
    /// Bytes waiting to be read, without reading them.
    static func availableBytes(_ descriptor: FileDescriptor) -> Int {
        var count: CInt = 0
        return ioctl(descriptor.rawValue, UInt(FIONREAD), &count) == 0 ? Int(count) : -1
    }
}
