import TestSupport
import Testing

@testable import ContextBusServer

struct FlagReaderTests {
    @Test func readsValuesAfterTheFlagOrAfterAnEqualsSign() throws {
        var flags = FlagReader(["--socket", "/tmp/a", "--database=/tmp/b=c", "-h"])
        try expectEqual(flags.next(), "--socket")
        try expectEqual(flags.value(), "/tmp/a")
        try expectEqual(flags.next(), "--database")
        try expectEqual(flags.value(), "/tmp/b=c")
        try expectEqual(flags.next(), "--help")
        expectNil(try flags.next())
    }

    @Test func aFlagWithoutItsValueIsNamedInTheError() throws {
        var flags = FlagReader(["--socket"])
        _ = try flags.next()
        #expect(throws: ConfigurationError.missingValue(flag: "--socket")) { try flags.value() }
    }

    @Test func anArgumentThatIsNotAFlagIsRefused() {
        var flags = FlagReader(["socket"])
        #expect(throws: ConfigurationError.unexpectedArgument("socket")) { try flags.next() }
    }

    @Test func integersOutsideTheirRangeSayWhatWasExpected() throws {
        var flags = FlagReader(["--retry", "101", "--max", "0"])
        _ = try flags.next()
        #expect(
            throws: ConfigurationError.invalidValue(flag: "--retry", value: "101", expected: "an integer from 0 to 100")
        ) {
            try flags.integer(in: 0...100)
        }
        _ = try flags.next()
        #expect(throws: ConfigurationError.invalidValue(flag: "--max", value: "0", expected: "an integer ≥ 1")) {
            try flags.integer(in: 1...Int.max)
        }
    }

    @Test func choicesListTheAcceptedValues() throws {
        var flags = FlagReader(["--log-level", "loud"])
        _ = try flags.next()
        #expect(
            throws: ConfigurationError.invalidValue(
                flag: "--log-level", value: "loud", expected: "error, warning, info, debug")
        ) { try flags.choice(of: LogLevel.self) }
    }
}
