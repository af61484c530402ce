import TestSupport
import Testing

@testable import ContextBusTransport

struct FrameDecoderTests {
    private let ping = frame(#"{"jsonrpc":"2.0","id":1,"method":"bus.ping"}"#)
    private let pong = frame(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)

    private func drain(_ decoder: inout FrameDecoder) throws(FrameError) -> [[UInt8]] {
        var frames: [[UInt8]] = []
        while let payload = try decoder.nextFrame() { frames.append(payload) }
        return frames
    }

    @Test func waitsForTheRestOfAPartialHeader() throws {
        var decoder = FrameDecoder()
        decoder.append(ping[0..<3])
        expectNil(try decoder.nextFrame())
        expectEqual(decoder.bufferedByteCount, 3)
        decoder.append(ping[3...])
        try expectEqual(decoder.nextFrame(), Array(ping[4...]))
        expectNil(try decoder.nextFrame())
        expectEqual(decoder.bufferedByteCount, 0)
    }

    @Test func waitsForTheRestOfAPartialBody() throws {
        var decoder = FrameDecoder()
        decoder.append(ping[0..<10])
        expectNil(try decoder.nextFrame())
        decoder.append(ping[10..<(ping.count - 1)])
        expectNil(try decoder.nextFrame())
        decoder.append(ping[(ping.count - 1)...])
        try expectEqual(decoder.nextFrame(), Array(ping[4...]))
    }

    @Test func returnsTwoFramesFromOneRead() throws {
        var decoder = FrameDecoder()
        decoder.append(ping + pong)
        try expectEqual(drain(&decoder), [Array(ping[4...]), Array(pong[4...])])
    }

    @Test func keepsTheStartOfTheNextFrameAfterACompleteOne() throws {
        var decoder = FrameDecoder()
        decoder.append(ping + pong[0..<6])
        try expectEqual(drain(&decoder), [Array(ping[4...])])
        expectEqual(decoder.bufferedByteCount, 6)
        decoder.append(pong[6...])
        try expectEqual(drain(&decoder), [Array(pong[4...])])
    }

    @Test func decodesAStreamFedOneByteAtATime() throws {
        var decoder = FrameDecoder()
        var frames: [[UInt8]] = []
        for byte in ping + pong + ping {
            decoder.append([byte])
            frames += try drain(&decoder)
        }
        expectEqual(frames, [Array(ping[4...]), Array(pong[4...]), Array(ping[4...])])
    }

    @Test func decodesTheSameFramesHoweverTheStreamIsCut() throws {
        var generator = SeededGenerator(seed: 7)
        let payloads = (0..<200).map { i in
            Array("{\"n\":\(i),\"pad\":\"\(String(repeating: "x", count: i % 37))\"}".utf8)
        }
        let stream = payloads.flatMap(frame)
        for _ in 0..<20 {
            var decoder = FrameDecoder()
            var frames: [[UInt8]] = []
            var offset = 0
            while offset < stream.count {
                let cut = min(stream.count, offset + Int.random(in: 1...300, using: &generator))
                decoder.append(stream[offset..<cut])
                frames += try drain(&decoder)
                offset = cut
            }
            expectEqual(frames, payloads)
            try decoder.finish()
        }
    }

    @Test func rejectsALengthAboveTheMaximumAsSoonAsTheHeaderArrives() {
        var decoder = FrameDecoder(maximumLength: 1024)
        decoder.append([0x00, 0x00, 0x04, 0x01])
        #expect(throws: FrameError.frameTooLarge(length: 1025, limit: 1024)) { try decoder.nextFrame() }
    }

    @Test func rejectsTheLargestLengthTheHeaderCanHold() {
        var decoder = FrameDecoder()
        decoder.append([0xFF, 0xFF, 0xFF, 0xFF, 0x7B])
        #expect(
            throws: FrameError.frameTooLarge(length: 4_294_967_295, limit: 16 * 1024 * 1024)
        ) { try decoder.nextFrame() }
    }

    @Test func acceptsALengthExactlyAtTheMaximum() throws {
        var decoder = FrameDecoder(maximumLength: 8)
        decoder.append(frame("[1,2,3,]"))
        try expectEqual(decoder.nextFrame(), Array("[1,2,3,]".utf8))
    }

    @Test func rejectsAZeroLength() {
        var decoder = FrameDecoder()
        decoder.append([0, 0, 0, 0] + ping)
        #expect(throws: FrameError.emptyFrame) { try decoder.nextFrame() }
    }

    @Test func deliversTheFramesBeforeAFramingError() throws {
        var decoder = FrameDecoder()
        decoder.append(ping + [0, 0, 0, 0])
        try expectEqual(decoder.nextFrame(), Array(ping[4...]))
        #expect(throws: FrameError.emptyFrame) { try decoder.nextFrame() }
    }

    @Test func staysFailedAfterAnErrorAndIgnoresLaterBytes() {
        var decoder = FrameDecoder(maximumLength: 16)
        decoder.append([0, 0, 1, 0])
        #expect(throws: FrameError.frameTooLarge(length: 256, limit: 16)) { try decoder.nextFrame() }
        decoder.append(ping)
        expectEqual(decoder.bufferedByteCount, 0)
        #expect(throws: FrameError.frameTooLarge(length: 256, limit: 16)) { try decoder.nextFrame() }
        expectEqual(decoder.failure, .frameTooLarge(length: 256, limit: 16))
        #expect(throws: FrameError.frameTooLarge(length: 256, limit: 16)) { try decoder.finish() }
    }

    @Test func reportsLeftoverBytesWhenThePeerClosesMidFrame() throws {
        var decoder = FrameDecoder()
        decoder.append(ping + pong[0..<9])
        try expectEqual(drain(&decoder), [Array(ping[4...])])
        #expect(throws: FrameError.truncatedFrame(bufferedBytes: 9, expectedLength: pong.count - 4)) {
            try decoder.finish()
        }
    }

    @Test func reportsLeftoverBytesWhenThePeerClosesMidHeader() {
        var decoder = FrameDecoder()
        decoder.append([0, 0])
        #expect(throws: FrameError.truncatedFrame(bufferedBytes: 2, expectedLength: nil)) { try decoder.finish() }
    }

    @Test func finishesCleanlyAtAFrameBoundary() throws {
        var decoder = FrameDecoder()
        decoder.append(ping)
        _ = try drain(&decoder)
        try decoder.finish()
    }

    @Test func acceptsBytesFromARawReadBuffer() throws {
        var decoder = FrameDecoder()
        ping.withUnsafeBytes { decoder.append($0) }
        try expectEqual(decoder.nextFrame(), Array(ping[4...]))
    }

    @Test func describesErrorsOnOneLine() {
        expectEqual(
            FrameError.frameTooLarge(length: 20, limit: 10).description,
            "framing error: a frame of 20 bytes exceeds the limit of 10 bytes")
        expectEqual(
            FrameError.truncatedFrame(bufferedBytes: 9, expectedLength: 30).description,
            "framing error: the stream ended 25 bytes short of the end of a 30-byte frame")
        expectFalse(FrameError.emptyFrame.description.contains("\n"))
    }
}
