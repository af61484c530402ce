import Dispatch
import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport

struct SocketConnectionWritingTests {
    @Test func deliversALargePayloadToASlowReaderIntactAndInOrder() throws {
        try withLoop { loop in
            let size = 32 << 20
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: 64 << 20))
            let payload = patternBytes(count: size, seed: 7)
            expectTrue(connection.write(payload))
            expectTrue(connection.outboundByteCount > size / 2, "the socket took only part at once")
            // Read in small pieces, so the loop meets EAGAIN and waits for EPOLLOUT many times.
            let received = RawPeer.read(peer, count: size, chunk: 4096)
            expectEqual(received.count, size)
            expectEqual(received, payload)
            expectTrue(probe.wait { $0.drains >= 1 })
            expectEqual(connection.outboundByteCount, 0)
            connection.close()
        }
    }

    @Test func keepsWriteOrderAcrossTheQueueAndDirectSends() throws {
        try withLoop { loop in
            let (connection, _, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: 64 << 20))
            let pieces = (0..<64).map { patternBytes(count: 50_000 + $0, seed: UInt32($0) + 1) }
            for piece in pieces { expectTrue(connection.write(piece)) }
            let expected = pieces.flatMap { $0 }
            expectEqual(RawPeer.read(peer, count: expected.count), expected)
            connection.close()
        }
    }

    @Test func keepsEachWriteWholeWhenManyThreadsWriteAtOnce() throws {
        try withLoop { loop in
            let (connection, _, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: 64 << 20))
            let threads = 8
            let perThread = 500
            // Record: [thread, sequence high, sequence low, length] then `length` copies of the thread number.
            @Sendable func record(thread: Int, sequence: Int) -> [UInt8] {
                let length = 1 + (sequence * 37 + thread * 11) % 3000
                return [UInt8(thread), UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0]
                    + withUnsafeBytes(of: UInt16(length).bigEndian, Array.init)
                    + [UInt8](repeating: UInt8(thread), count: length)
            }
            let reader = Locked<[UInt8]>([])
            let expectedCount = (0..<threads).reduce(0) { total, thread in
                total + (0..<perThread).reduce(0) { $0 + record(thread: thread, sequence: $1).count }
            }
            let readDone = Occurrence()
            Thread.detachNewThread {
                reader.withLock { $0 = RawPeer.read(peer, count: expectedCount) }
                readDone.fire()
            }
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for sequence in 0..<perThread { connection.write(record(thread: thread, sequence: sequence)) }
            }
            expectTrue(readDone.wait())
            let bytes = reader.withLock { $0 }
            expectEqual(bytes.count, expectedCount)
            var nextSequence = [Int](repeating: 0, count: threads)
            var offset = 0
            while offset + 6 <= bytes.count {
                let thread = Int(bytes[offset])
                let sequence = Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
                let length = Int(bytes[offset + 4]) << 8 | Int(bytes[offset + 5])
                guard thread < threads, sequence == nextSequence[thread],
                    bytes[offset + 6..<offset + 6 + length].allSatisfy({ $0 == UInt8(thread) })
                else {
                    Issue.record("torn or reordered record at byte \(offset)")
                    return
                }
                nextSequence[thread] += 1
                offset += 6 + length
            }
            expectEqual(offset, bytes.count)
            expectEqual(nextSequence, [Int](repeating: perThread, count: threads))
            connection.close()
        }
    }

    @Test func reportsOverflowWhenThePeerStopsReadingAndKeepsServingOthers() throws {
        try withLoop { loop in
            let limit = 256 * 1024
            let (stuck, stuckProbe, stuckPeer) = try makeConnectedPair(
                on: loop, options: .init(maxOutboundBytes: limit))
            let chunk = [UInt8](repeating: 0xAB, count: 4096)
            var accepted = 0
            while stuck.write(chunk) {
                accepted += 1
                expectLessThan(accepted, 10_000, "the queue must stop growing")
                if accepted >= 10_000 { return }
            }
            expectTrue(stuckProbe.wait { !$0.overflows.isEmpty })
            let overflow = try #require(stuckProbe.overflows.first)
            expectEqual(overflow.limit, limit)
            expectEqual(overflow.refusedBytes, chunk.count)
            expectTrue(overflow.queuedBytes + chunk.count > limit)
            expectLessThanOrEqual(stuck.outboundByteCount, limit)
            expectFalse(stuck.write([1]), "after an overflow nothing more is accepted")

            // The same loop still serves another connection.
            let (busy, busyProbe, busyPeer) = try makeConnectedPair(on: loop)
            RawPeer.write(busyPeer, [1, 2, 3])
            expectTrue(busyProbe.wait { $0.bytes == [1, 2, 3] })
            expectTrue(busy.write([4, 5, 6]))
            expectEqual(RawPeer.read(busyPeer, count: 3), [4, 5, 6])

            // Best-effort goodbye, then close: the peer never reads, so the timeout closes it.
            stuck.closeAfterFlushing(Array("bus.overflow".utf8), timeout: .milliseconds(50))
            expectEqual(stuckProbe.waitForClose(), .localClose)
            expectEqual(stuckProbe.overflows.count, 1)
            _ = stuckPeer
            busy.close()
        }
    }

    @Test func takesAWritePastTheQueueLimitThatTheSocketStillTakes() throws {
        try withLoop { loop in
            // A reading peer is not dropped because the loop has not sent the queue yet (e.g. kept off the CPU):
            // only bytes the socket refused count against the limit.
            let limit = 64 * 1024
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: limit))
            var written: [UInt8] = []
            var received: [UInt8] = []
            var seed: UInt32 = 1
            func nextFrame() -> [UInt8] {
                seed += 1
                return patternBytes(count: 8 * 1024, seed: seed)
            }
            try whileHolding(loop) {
                while connection.outboundByteCount == 0 {
                    let frame = nextFrame()
                    try #require(connection.write(frame))
                    written += frame
                    try #require(seed < 1_000, "the socket buffer fills up")
                }
                // The peer takes everything the socket holds; the queue waits for the held loop.
                received += RawPeer.read(peer, count: RawPeer.availableBytes(peer))
                for _ in 0..<12 {
                    let frame = nextFrame()
                    let isAccepted = connection.write(frame)
                    expectTrue(isAccepted, "the socket has room for the queue and this frame")
                    if isAccepted { written += frame }
                }
            }
            received += RawPeer.read(peer, count: written.count - received.count)
            expectEqual(received, written)
            expectEmpty(probe.overflows)
            expectTrue(probe.wait { $0.drains >= 1 }, "the drain is reported even when a write sent the queue itself")
            expectEqual(connection.outboundByteCount, 0)
            connection.close()
        }
    }

    @Test func flushesQueuedBytesAndTheFinalBytesBeforeClosingGracefully() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: 8 << 20))
            let payload = patternBytes(count: 2 << 20, seed: 3)
            expectTrue(connection.write(payload))
            let goodbye = Array("goodbye".utf8)
            connection.closeAfterFlushing(goodbye, timeout: .seconds(30))
            expectFalse(connection.write([0]), "no writes while draining")
            expectEqual(RawPeer.readToEnd(peer), payload + goodbye)
            expectEqual(probe.waitForClose(), .localClose)
        }
    }

    @Test func closesFromAnotherThreadWhileWritingWithoutTearingTheStream() throws {
        try withLoop { loop in
            let (connection, probe, peer) = try makeConnectedPair(on: loop, options: .init(maxOutboundBytes: 1 << 20))
            let record = patternBytes(count: 1000, seed: 9)
            let written = Locked(0)
            let writerDone = Occurrence()
            Thread.detachNewThread {
                while connection.write(record) { written.withLock { $0 += 1 } }
                writerDone.fire()
            }
            let received = Locked<[UInt8]>([])
            let readerDone = Occurrence()
            Thread.detachNewThread {
                received.withLock { $0 = RawPeer.readToEnd(peer) }
                readerDone.fire()
            }
            while written.withLock({ $0 }) < 200 { sched_yield() }
            connection.close()
            expectTrue(writerDone.wait(), "writes are refused after close")
            expectTrue(readerDone.wait(), "the peer sees end of file")
            expectEqual(probe.waitForClose(), .localClose)
            // What arrived is a prefix of the concatenated accepted writes: nothing reordered or invented.
            let bytes = received.withLock { $0 }
            expectTrue(bytes.count <= written.withLock { $0 } * record.count)
            var matches = true
            for (index, byte) in bytes.enumerated() where byte != record[index % record.count] {
                matches = false
                break
            }
            expectTrue(matches)
        }
    }
}
