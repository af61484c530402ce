import TestSupport
import Testing

@testable import ContextBusServer

/// `NumberedFrame`: the length header and the spliced number.
struct NumberedFrameTests {
    @Test func theFrameIsItsLengthHeaderThenPrefixNumberAndSuffixForEveryNumberWidth() throws {
        let frame = NumberedFrame(prefix: Array("[".utf8), suffix: Array("]".utf8))
        let numbers: [Int64] = [0, 9, 10, 99, 100, -1, -10, 1_234_567, .max, .min, .max - 1, .min + 1]
        for number in numbers {
            let bytes = frame.frame(for: number)
            let payload = Array("[\(number)]".utf8)
            expectEqual(frame.payloadLength(for: number), payload.count)
            let length = UInt32(payload.count)
            let header = [
                UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF),
            ]
            expectEqual(bytes, header + payload, "number \(number)")
        }
    }

    @Test func appendingAddsTheFrameAfterWhatIsThere() {
        let frame = NumberedFrame(prefix: Array("a".utf8), suffix: Array("b".utf8))
        var output = Array("xyz".utf8)
        frame.append(for: 42, into: &output)
        expectEqual(output, Array("xyz".utf8) + [0, 0, 0, 4] + Array("a42b".utf8))
    }
}
