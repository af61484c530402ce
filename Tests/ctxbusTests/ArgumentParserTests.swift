import TestSupport
import Testing

@testable import ctxbus

struct ArgumentParserTests {
    static let configuration = CommandConfiguration(
        name: "fetch", abstract: "Fetch.",
        arguments: [ArgumentSpec("entity", help: "The entity.")],
        options: [
            .value("where", valueName: "predicate", help: "A predicate."),
            .repeating("sort", valueName: "key", help: "Sort keys."),
            .flag("count", help: "Count."),
        ],
        service: .store)

    func parse(_ words: [String]) throws(UsageError) -> ParsedArguments {
        switch try ArgumentParser(Self.configuration).parse(words) {
        case .arguments(let arguments): return arguments
        case .help: throw UsageError("asked for help")
        }
    }

    @Test func readsPositionalsOptionsAndFlagsInAnyOrder() throws {
        let arguments = try parse(["--count", "Reading", "--where", "value > 3", "--sort", "time"])
        expectEqual(arguments.firstPositional("entity"), "Reading")
        expectEqual(arguments.value("where"), "value > 3")
        expectEqual(arguments.values("sort"), ["time"])
        expectTrue(arguments.flag("count"))
        expectFalse(arguments.flag("json"))
    }

    @Test func takesTheNextWordAsAValueEvenWhenItStartsWithADash() throws {
        let arguments = try parse(["Reading", "--sort", "-time", "--sort=-value"])
        expectEqual(arguments.values("sort"), ["-time", "-value"])
    }

    @Test func acceptsTheEqualsFormAndAnEmptyValue() throws {
        let arguments = try parse(["Reading", "--where=", "--socket=/tmp/s.sock"])
        expectEqual(arguments.value("where"), "")
        expectEqual(arguments.value("socket"), "/tmp/s.sock")
    }

    @Test func keepsTheOrderOfEveryItem() throws {
        let arguments = try parse(["--sort", "a", "Reading", "--count"])
        expectEqual(
            arguments.items, [.option("sort", value: "a"), .positional("Reading"), .option("count", value: nil)])
    }

    @Test func treatsEverythingAfterDoubleDashAsPositional() throws {
        let arguments = try parse(["--", "--count"])
        expectEqual(arguments.firstPositional("entity"), "--count")
        expectFalse(arguments.flag("count"))
    }

    @Test func asksForHelpWithEitherSpellingWhateverElseIsWrong() throws {
        try expectEqual(ArgumentParser(Self.configuration).parse(["--bogus", "-h"]), .help)
        try expectEqual(ArgumentParser(Self.configuration).parse(["--help"]), .help)
    }

    @Test(arguments: [
        (["Reading", "--bogus"], "unknown option '--bogus'"),
        (["Reading", "--where"], "missing value for '--where'"),
        (["--count"], "missing <entity>"),
        (["Reading", "Device"], "unexpected argument 'Device'"),
        (["Reading", "--count=yes"], "'--count' takes no value"),
        (["Reading", "--where", "a", "--where", "b"], "'--where' may be given only once"),
        (["Reading", "-x"], "unknown option '-x'"),
    ])
    func rejectsBadCommandLinesWithAMessageNamingTheWord(words: [String], message: String) {
        #expect(throws: UsageError(message)) { try parse(words) }
    }

    @Test func addsTheCommonOptionsToEveryCommand() {
        let names = Self.configuration.allOptions.map(\.long)
        expectEqual(names.suffix(3), ["socket", "json", "help"])
    }

    @Test func readsIntegersWithABound() throws {
        let configuration = CommandConfiguration(
            name: "x", abstract: "", options: [.value("limit", valueName: "n", help: "")])
        guard case .arguments(let arguments) = try ArgumentParser(configuration).parse(["--limit", "-1"]) else {
            Issue.record("expected arguments")
            return
        }
        #expect(throws: UsageError.self) { try arguments.integer("limit", atLeast: 0) }
    }
}
