import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusWire

struct RPCErrorTests {
    @Test func everyConstructorUsesItsCodeFromTheProtocolTable() {
        let table: [(RPCError, Int)] = [
            (.parseError("x"), -32700), (.parseError(JSONParseError(.trailingData, at: 3)), -32700),
            (.invalidRequest("x"), -32600), (RPCError(framing: .emptyFrame), -32600), (.methodNotFound("a.b"), -32601),
            (.invalidParams(field: "f", message: "m"), -32602), (.internalError(), -32603),
            (.helloRequired(method: "store.get"), 401), (.forbidden("uid 7"), 403), (.notFound("x"), 404),
            (.timeout("x"), 408), (.conflict("x", conflicts: []), 409), (.gone(since: 5), 410),
            (.validationFailed("x", errors: []), 422), (.tooManyRequests(limit: 1024), 429), (.cancelled(), 499),
            (.deviceError("x"), 502), (.unavailable("BlueZ is not on the bus"), 503),
        ]
        for (error, code) in table {
            expectEqual(error.code.rawValue, code, "\(error)")
            expectEqual(error.json["code"], .int(Int64(code)))
        }
        expectEqual(RPCErrorCode.validationFailed, 422)
    }

    @Test func invalidParamsNamesTheFieldInData() {
        let error = RPCError.invalidParams(field: "steps[2].characteristic", message: "expected a UUID")
        expectEqual(error.data, .object(["field": .string("steps[2].characteristic")]))
        expectEqual(error.field, "steps[2].characteristic")
        expectEqual(error.message, "invalid params: steps[2].characteristic: expected a UUID")
        expectNil(RPCError.invalidParams(field: nil, message: "expected an object").data)
    }

    @Test func parseErrorsCarryTheOffset() {
        expectEqual(RPCError.parseError(JSONParseError(.trailingData, at: 17)).data, .object(["offset": .int(17)]))
    }

    @Test func writesDataOnlyWhenThereIsSome() throws {
        let bare = RPCError(code: .notFound, message: "gone")
        expectEqual(bare.json, .object(["code": .int(404), "message": .string("gone")]))
        expectEqual(
            String(decoding: try RPCResponse(id: 1, error: bare).jsonBytes(), as: UTF8.self).contains("data"), false)
    }

    @Test func readsErrorObjectsBackAndRejectsMalformedOnes() {
        let error = RPCError.tooManyRequests(limit: 8)
        expectEqual(RPCError(json: error.json), error)
        expectNil(RPCError(json: json(#"{"code":"1","message":"x"}"#)))
        expectNil(RPCError(json: json(#"{"code":1}"#)))
        expectNil(RPCError(json: json(#"{"code":1e30,"message":"x"}"#)))
    }

    @Test func describesItselfOnOneLine() {
        expectEqual(RPCError.methodNotFound("x.y").description, "error -32601: method 'x.y' not found")
    }
}
