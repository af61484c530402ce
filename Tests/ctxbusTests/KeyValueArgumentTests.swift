import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ctxbus

struct KeyValueArgumentTests {
    @Test(arguments: [
        ("min=20", JSONValue.int(20)),
        ("ratio=2.5", .double(2.5)),
        ("on=true", .bool(true)),
        ("gone=null", .null),
        ("ids=[\"Device/1\",2]", .array([.string("Device/1"), .int(2)])),
        ("name=thermo", .string("thermo")),
        ("address=AA:BB:CC:DD:EE:01", .string("AA:BB:CC:DD:EE:01")),
        ("quoted=\"20\"", .string("20")),
        ("empty=", .string("")),
        ("expr=a=b", .string("a=b")),
        ("spaced= 7 ", .int(7)),
    ])
    func readsTheValueAsJSONWhenItParsesElseAsAString(word: String, value: JSONValue) throws {
        let argument = try KeyValueArgument(parsing: word, option: "--arg")
        expectEqual(argument.key, String(word.prefix { $0 != "=" }))
        expectEqual(argument.value, value)
    }

    @Test(arguments: ["noequals", "=5"])
    func rejectsAWordWithoutAName(word: String) {
        #expect(throws: UsageError("invalid --arg '\(word)': expected name=value")) {
            try KeyValueArgument(parsing: word, option: "--arg")
        }
    }

    @Test func laterValuesOfTheSameNameWin() throws {
        expectEqual(
            try KeyValueArgument.object(["a=1", "b=x", "a=2"], option: "--arg"), ["a": .int(2), "b": .string("x")])
    }
}
