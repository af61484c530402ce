import TestSupport
import Testing

@testable import ContextBusTransport
@testable import ContextBusWire

struct BusMethodsTests {
    @Test func helloParamsMatchTheProtocolExample() throws {
        let example = json(#"{"protocol":1,"client":"name"}"#)
        let params = try HelloParams(json: example)
        expectEqual(params.protocolVersion, 1)
        expectEqual(params.client, "name")
        expectEqual(params.json, example)
        expectEqual(BusHello.name, "bus.hello")
    }

    @Test func helloResultMatchesTheProtocolExample() throws {
        let example = json(
            #"{"protocol":1,"server":"storesvc","version":"0.1.0","maxFrame":16777216,"maxInFlight":1024,"peer":{"uid":1000,"gid":1000,"pid":4242}}"#
        )
        let result = try HelloResult(json: example)
        expectEqual(result.server, "storesvc")
        expectEqual(result.maxFrame, 16_777_216)
        expectEqual(result.maxInFlight, 1024)
        expectEqual(result.peer, PeerCredentials(uid: 1000, gid: 1000, pid: 4242))
        expectEqual(result.json, example)
    }

    @Test func helloNamesTheFieldThatIsWrong() {
        expectEqual(
            invalidField { () throws(RPCError) in _ = try HelloParams(json: json(#"{"client":"x"}"#)) }, "protocol")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try HelloParams(json: json(#"{"protocol":"1"}"#)) }, "protocol")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try HelloParams(json: json(#"{"protocol":1,"client":2}"#)) },
            "client")
        let noUID = #"{"protocol":1,"server":"s","version":"v","maxFrame":1,"maxInFlight":1,"peer":{"gid":1,"pid":1}}"#
        expectEqual(invalidField { () throws(RPCError) in _ = try HelloResult(json: json(noUID)) }, "peer.uid")
    }

    @Test func paramsThatAreNotAnObjectAreInvalidParamsWithoutAField() {
        do {
            _ = try HelloParams(json: .array([]))
            Issue.record("accepted an array")
        } catch {
            expectEqual(error.code, .invalidParams)
            expectNil(error.field)
        }
    }

    @Test func cancelTakesANumberOrStringRequestID() throws {
        expectEqual(try CancelParams(json: json(#"{"request":7}"#)).request, .number(7))
        expectEqual(try CancelParams(json: json(#"{"request":"a"}"#)).request, .string("a"))
        expectEqual(CancelParams(request: 7).json, json(#"{"request":7}"#))
        expectEqual(
            invalidField { () throws(RPCError) in _ = try CancelParams(json: json(#"{"request":null}"#)) }, "request")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try CancelParams(json: json(#"{"request":[1]}"#)) }, "request")
    }

    @Test func pingAnswersAnEmptyObject() throws {
        expectEqual(EmptyObject().json, .object([:]))
        expectEqual(try BusPing.Result(json: json(#"{"extra":1}"#)), EmptyObject())
        expectNil(invalidField { () throws(RPCError) in _ = try EmptyObject(json: .int(1)) })
    }

    @Test func overflowEventMatchesTheProtocol() throws {
        let event = RPCEvent(OverflowEvent(dropped: 3))
        expectEqual(event.json, json(#"{"jsonrpc":"2.0","method":"bus.overflow","params":{"dropped":3}}"#))
        try expectEqual(event.payload(as: OverflowEvent.self), OverflowEvent(dropped: 3))
    }
}
