import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

struct FrameEncoderTests {
    @Test func prefixesThePayloadWithItsBigEndianLength() throws {
        let payload = [UInt8](repeating: 0x20, count: 0x0102_03)
        let bytes = try FrameEncoder().encode(payload: payload)
        expectEqual(Array(bytes[0..<4]), [0x00, 0x01, 0x02, 0x03])
        expectEqual(bytes.count, 4 + payload.count)
    }

    @Test func encodesAJSONValueThatTheDecoderReadsBack() throws {
        let value: JSONValue = .object(["jsonrpc": .string("2.0"), "id": .int(3), "method": .string("bus.ping")])
        var decoder = FrameDecoder()
        decoder.append(try FrameEncoder().encode(value))
        let payload = try #require(try decoder.nextFrame())
        try expectEqual(JSONParser().parse(payload), value)
    }

    @Test func refusesAnEmptyPayload() {
        #expect(throws: FrameError.emptyFrame) { try FrameEncoder().encode(payload: [UInt8]()) }
    }

    @Test func refusesAPayloadAboveItsMaximum() {
        #expect(throws: FrameError.frameTooLarge(length: 11, limit: 10)) {
            try FrameEncoder(maximumLength: 10).encode(payload: Array("12345678901".utf8))
        }
        #expect(throws: MessageEncodingError.frame(.frameTooLarge(length: 11, limit: 10))) {
            try FrameEncoder(maximumLength: 10).encode(.string("123456789"))
        }
    }

    @Test func reportsNonFiniteNumbersAsJSONErrors() {
        #expect(throws: MessageEncodingError.json(.nonFiniteNumber(.infinity))) {
            try FrameEncoder().encode(.array([.double(.infinity)]))
        }
    }

    @Test func frameEncodeMatchesTheEncoder() throws {
        let payload = Array(#"{"a":1}"#.utf8)
        expectEqual(Frame.encode(payload: payload), (try FrameEncoder().encode(payload: payload)))
        expectEqual(Frame.encode(payload: payload), frame(payload))
    }
}
