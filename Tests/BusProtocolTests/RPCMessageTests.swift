import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusTransport
@testable import ContextBusWire

struct RPCMessageTests {
    private func text(_ message: some RPCMessage) throws -> String {
        String(decoding: try message.jsonBytes(), as: UTF8.self)
    }

    @Test func writesARequestEnvelopeInProtocolOrder() throws {
        let request = RPCRequest(id: 7, method: "store.get", params: .object(["ids": .array([.string("Reading/3")])]))
        expectEqual(try text(request), #"{"jsonrpc":"2.0","id":7,"method":"store.get","params":{"ids":["Reading/3"]}}"#)
        expectEqual(try text(RPCRequest(id: nil, method: "bus.ping")), #"{"jsonrpc":"2.0","method":"bus.ping"}"#)
        expectEqual(
            try text(RPCRequest(id: "k\"1", method: "bus.ping")), #"{"jsonrpc":"2.0","id":"k\"1","method":"bus.ping"}"#)
    }

    @Test func writesResultAndErrorResponses() throws {
        expectEqual(try text(RPCResponse(id: 7, result: .object([:]))), #"{"jsonrpc":"2.0","id":7,"result":{}}"#)
        let conflict = RPCResponse(
            id: "x", error: RPCError(code: .conflict, message: "no", data: .object(["a": .null])))
        expectEqual(
            try text(conflict), #"{"jsonrpc":"2.0","id":"x","error":{"code":409,"message":"no","data":{"a":null}}}"#)
        let parse = RPCResponse(id: nil, error: .parseError("bad"))
        expectEqual(try text(parse), #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
    }

    @Test func writesEvents() throws {
        let event = RPCEvent(OverflowEvent(dropped: 12))
        expectEqual(try text(event), #"{"jsonrpc":"2.0","method":"bus.overflow","params":{"dropped":12}}"#)
    }

    @Test func writtenBytesParseToTheMessagesJSONValue() throws {
        let messages: [any RPCMessage] = [
            RPCRequest(id: -3, method: "a", params: json(#"{"x":[1,2.5,"é",null,true]}"#)),
            RPCResponse(id: "r", result: json(#"{"txn":1,"objects":[]}"#)),
            RPCResponse(id: 1, error: .invalidParams(field: "steps[2].characteristic", message: "bad")),
            RPCEvent(method: "store.changed", params: json(#"{"deleted":["A/1"]}"#)),
        ]
        for message in messages {
            try expectEqual(JSONParser().parse(message.jsonBytes()), message.json)
        }
    }

    @Test func messagesSurviveAFrameRoundTripThroughIncomingMessage() throws {
        let request = RPCRequest(
            id: 12, StoreGet.self, params: GetParams(ids: [ObjectID(entity: "Reading", number: 3)]))
        var decoder = FrameDecoder()
        decoder.append(try request.encodeFrame())
        let payload = try #require(try decoder.nextFrame())
        expectEqual(IncomingMessage(payload: payload), .request(request))

        let response = RPCResponse(id: 12, result: StoreObjectsResult(txn: 9, objects: [], missing: []))
        decoder.append(try response.encodeFrame())
        let answer = try #require(try decoder.nextFrame())
        let read = IncomingMessage(payload: answer, from: .server)
        expectEqual(read, .response(response))
        try expectEqual(
            read.response?.result(for: StoreGet.self, model: .deviceReadings),
            StoreObjectsResult(txn: 9, objects: [], missing: []))
    }

    @Test func aResponseErrorIsThrownWhenReadingItsResult() {
        let response = RPCResponse(id: 1, error: .notFound("no such subscription"))
        #expect(throws: RPCError.notFound("no such subscription")) { try response.result(for: StoreUnsubscribe.self) }
    }

    @Test func typedParamsTreatAbsentParamsAsAnEmptyObject() throws {
        try expectEqual(RPCRequest(id: 1, method: "bus.ping").params(for: BusPing.self), EmptyObject())
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try RPCRequest(id: 1, method: "store.get").params(for: StoreGet.self)
            }, "ids")
    }

    @Test func refusesToFrameNonFiniteNumbers() {
        let response = RPCResponse(id: 1, result: .object(["v": .double(.nan)]))
        #expect(throws: MessageEncodingError.self) { try response.encodeFrame() }
    }

    @Test func refusesToFrameAResponseLargerThanTheLimit() {
        let response = RPCResponse(id: 1, result: .string(String(repeating: "x", count: 100)))
        #expect(throws: MessageEncodingError.frame(.frameTooLarge(length: 136, limit: 64))) {
            try response.encodeFrame(encoder: FrameEncoder(maximumLength: 64))
        }
    }

    @Test func rpcIDsReadOnlyIntegersAndStrings() {
        expectEqual(RPCID(json: .int(-4)), .number(-4))
        expectEqual(RPCID(json: .double(4)), .number(4))
        expectEqual(RPCID(json: .string("")), .string(""))
        expectNil(RPCID(json: .double(4.5)))
        expectNil(RPCID(json: .double(1e300)))
        expectNil(RPCID(json: .null))
        expectNil(RPCID(json: .bool(true)))
        expectEqual(RPCID.number(3).description, "3")
        expectEqual(RPCID.string("a").description, "\"a\"")
    }
}
