import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusWire

struct IncomingMessageTests {
    private func fromClient(_ text: String) -> IncomingMessage {
        IncomingMessage(payload: Array(text.utf8), from: .client)
    }

    private func fromServer(_ text: String) -> IncomingMessage {
        IncomingMessage(payload: Array(text.utf8), from: .server)
    }

    // MARK: - From a client

    @Test func readsARequestWithNumberIDAndParams() {
        let message = fromClient(#"{"jsonrpc":"2.0","id":7,"method":"store.fetch","params":{"entity":"Reading"}}"#)
        expectEqual(
            message,
            .request(
                RPCRequest(id: .number(7), method: "store.fetch", params: .object(["entity": .string("Reading")]))))
    }

    @Test func readsARequestWithStringIDAndNoParams() {
        expectEqual(
            fromClient(#"{"method":"bus.ping","id":"a-1","jsonrpc":"2.0"}"#),
            .request(RPCRequest(id: .string("a-1"), method: "bus.ping")))
    }

    @Test func readsARequestWithoutIDAsANotification() {
        let message = fromClient(#"{"jsonrpc":"2.0","method":"bus.cancel","params":{"request":3}}"#)
        expectEqual(message.request?.isNotification, true)
    }

    @Test func readsAnIntegralDoubleIDAsANumber() {
        expectEqual(fromClient(#"{"jsonrpc":"2.0","id":7.0,"method":"bus.ping"}"#).request?.id, .number(7))
    }

    @Test(arguments: [
        "{", "", "nul", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bus.ping\"} x", "{\"a\":1,\"a\":2}",
    ])
    func answersTextThatIsNotJSONWithParseErrorAndNullID(text: String) {
        guard case .invalid(let response) = fromClient(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        expectNil(response.id)
        expectEqual(response.error?.code, .parseError)
    }

    @Test func answersInvalidUTF8WithParseError() {
        let prefix = Array(#"{"jsonrpc":"2.0","id":1,"method":""#.utf8)
        let bytes: [UInt8] = prefix + [0xC3, 0x28] + Array(#""}"#.utf8)
        let message = IncomingMessage(payload: bytes)
        let expected = RPCError.parseError(JSONParseError(.invalidUTF8, at: prefix.count + 1))
        expectEqual(message, .invalid(RPCResponse(id: nil, error: expected)))
        expectNil(message.response?.error)
    }

    @Test func answersNestingBeyondTheParserLimitWithParseError() {
        let prefix = #"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"#
        let text = prefix + String(repeating: "[", count: 600)
        guard case .invalid(let response) = fromClient(text) else {
            Issue.record("accepted")
            return
        }
        expectEqual(response.error?.code, .parseError)
        // Two objects are open, so the 511th bracket is level 513.
        expectEqual(response.error?.data?["offset"], .int(Int64(prefix.utf8.count + 510)))
    }

    @Test func answersABatchWithInvalidRequestAndNullID() {
        guard case .invalid(let response) = fromClient(#"[{"jsonrpc":"2.0","id":1,"method":"bus.ping"}]"#) else {
            Issue.record("batch accepted")
            return
        }
        expectNil(response.id)
        expectEqual(response.error?.code, .invalidRequest)
        expectEqual(response.error?.message.contains("batch"), true)
        guard case .invalid(let empty) = fromClient("[]") else {
            Issue.record("empty batch accepted")
            return
        }
        expectEqual(empty.error?.code, .invalidRequest)
    }

    @Test(
        arguments: [
            // (message, the id the error response carries, or nil for null)
            (#""just a string""#, nil), ("42", nil), ("null", nil),
            (#"{"jsonrpc":"2.0","id":null,"method":"bus.ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":true,"method":"bus.ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":1.5,"method":"bus.ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":[1],"method":"bus.ping"}"#, nil),
            (#"{"jsonrpc":"2.0","id":{"a":1},"method":"bus.ping"}"#, nil),
            (#"{"id":5,"method":"bus.ping"}"#, RPCID.number(5)),
            (#"{"jsonrpc":"1.0","id":5,"method":"bus.ping"}"#, RPCID.number(5)),
            (#"{"jsonrpc":2.0,"id":"x","method":"bus.ping"}"#, RPCID.string("x")),
            (#"{"jsonrpc":"2.0","id":6}"#, RPCID.number(6)),
            (#"{"jsonrpc":"2.0","id":6,"method":7}"#, RPCID.number(6)),
            (#"{"jsonrpc":"2.0","id":6,"method":null}"#, RPCID.number(6)),
            (#"{"jsonrpc":"2.0","id":8,"method":"store.get","params":[1,2]}"#, RPCID.number(8)),
            (#"{"jsonrpc":"2.0","id":8,"method":"store.get","params":"ids"}"#, RPCID.number(8)),
            (#"{"jsonrpc":"2.0","id":8,"method":"store.get","params":null}"#, RPCID.number(8)),
            (#"{"jsonrpc":"2.0","id":9,"result":{}}"#, RPCID.number(9)),
            (#"{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"x"}}"#, RPCID.number(9)),
        ] as [(String, RPCID?)])
    func answersMessagesThatAreNotJSONRPCRequestsWithInvalidRequest(text: String, id: RPCID?) {
        guard case .invalid(let response) = fromClient(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        expectEqual(response.id, id, "\(text)")
        expectEqual(response.error?.code, .invalidRequest, "\(text)")
    }

    @Test func ignoresUnknownMembers() {
        expectEqual(
            fromClient(#"{"jsonrpc":"2.0","id":1,"method":"bus.ping","extra":[1]}"#).request?.method, "bus.ping")
    }

    @Test func theInvalidAnswerEncodesAsPROTOCOLSays() throws {
        guard case .invalid(let response) = fromClient("{oops") else {
            Issue.record("accepted")
            return
        }
        let sent = try JSONParser().parse(response.jsonBytes())
        expectEqual(sent["jsonrpc"], .string("2.0"))
        expectEqual(sent["id"], .null)
        expectEqual(sent["error"]?["code"], .int(-32700))
        expectNil(sent["result"])
    }

    // MARK: - From a server

    @Test func readsResponsesFromAServer() {
        expectEqual(
            fromServer(#"{"jsonrpc":"2.0","id":7,"result":{"txn":3}}"#),
            .response(RPCResponse(id: 7, result: .object(["txn": .int(3)]))))
        let error = fromServer(
            #"{"jsonrpc":"2.0","id":"q","error":{"code":409,"message":"conflict","data":{"conflicts":[]}}}"#)
        expectEqual(
            error.response?.error, RPCError(code: .conflict, message: "conflict", data: json(#"{"conflicts":[]}"#)))
    }

    @Test func readsAnErrorResponseWithNullIDFromAServer() {
        let message = fromServer(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#)
        expectEqual(
            message, .response(RPCResponse(id: nil, error: RPCError(code: .parseError, message: "parse error"))))
    }

    @Test func readsEventsFromAServer() {
        let message = fromServer(#"{"jsonrpc":"2.0","method":"bus.overflow","params":{"dropped":4}}"#)
        expectEqual(message.event, RPCEvent(method: "bus.overflow", params: json(#"{"dropped":4}"#)))
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":1,"method":"bus.ping"}"#, #"{"jsonrpc":"2.0","id":1}"#,
        #"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
        #"{"jsonrpc":"2.0","id":1,"error":{"code":"409","message":"x"}}"#,
        #"{"jsonrpc":"2.0","id":1,"error":{"code":409}}"#, #"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        #"{"id":1,"result":{}}"#,
    ])
    func rejectsMalformedMessagesFromAServer(text: String) {
        guard case .invalid(let response) = fromServer(text) else {
            Issue.record("\(text) was accepted")
            return
        }
        expectEqual(response.error?.code, .invalidRequest)
    }
}
