import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

struct JSONFieldsTests {
    @Test func namesNestedFieldsByPath() throws {
        let fields = try JSONFields(json(#"{"a":{"b":[{"c":1},{"c":"x"}]}}"#))
        let a = try fields.nested("a")
        expectEqual(a.path(of: "b"), "a.b")
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try a.objects("b") { (item) throws(RPCError) in try item.int("c") }
            }, "a.b[1].c")
    }

    @Test func treatsNullAsAbsent() throws {
        let fields = try JSONFields(json(#"{"a":null}"#))
        expectNil(try fields.optionalString("a"))
        expectEqual(invalidField { () throws(RPCError) in _ = try fields.string("a") }, "a")
        expectEqual(try fields.objects("a") { $0.path }, [])
    }

    @Test func readsIntegralDoublesAsIntegersButNotFractions() throws {
        let fields = try JSONFields(json(#"{"a":7.0,"b":7.5,"c":1e300}"#))
        try expectEqual(fields.int("a"), 7)
        expectEqual(invalidField { () throws(RPCError) in _ = try fields.int("b") }, "b")
        expectEqual(invalidField { () throws(RPCError) in _ = try fields.int("c") }, "c")
    }

    @Test func requiresEnumValuesToBeKnown() throws {
        let fields = try JSONFields(json(#"{"m":"objectTrump","n":"x"}"#))
        try expectEqual(fields.optionalEnum("m", cases: MergePolicy.allCases), .objectTrump)
        do {
            _ = try fields.optionalEnum("n", cases: MergePolicy.allCases)
            Issue.record("accepted an unknown policy")
        } catch {
            expectEqual(error.field, "n")
            expectTrue(error.message.contains("'storeTrump'"))
        }
    }
}
