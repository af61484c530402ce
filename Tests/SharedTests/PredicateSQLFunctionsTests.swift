import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

struct PredicateSQLFunctionsTests {
    private func value(_ sql: String, _ bindings: [PropertyValue] = []) throws -> Any? {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        return try db.rows("SELECT " + sql, bindings).first ?? nil
    }

    @Test func stringFunctionsReturnZeroOrOneNeverNull() throws {
        expectTrue(try value("cb_beginswith('Crème', 'CRE', 3)") as? Int64 == 1)
        expectTrue(try value("cb_endswith('abc', 'bc', 0)") as? Int64 == 1)
        expectTrue(try value("cb_contains('abc', 'B', 0)") as? Int64 == 0)
        expectTrue(try value("cb_like('a*b', 'a\\*?', 0)") as? Int64 == 1)
        expectTrue(try value("cb_matches('ab12', '[a-z]+\\d+', 0)") as? Int64 == 1)
        expectTrue(try value("cb_contains(NULL, 'a', 0)") as? Int64 == 0)
        expectTrue(try value("cb_contains(12, '1', 0)") as? Int64 == 0)
        expectTrue(try value("cb_matches('x', '(', 0)") as? Int64 == 0)
    }

    @Test func foldKeepsNullAndEmptyStringsApart() throws {
        expectTrue(try value("cb_fold(NULL, 1) IS NULL") as? Int64 == 1)
        expectTrue(try value("cb_fold('', 1) IS ''") as? Int64 == 1)
        expectTrue(try value("hex(cb_fold(?, 3))", [.string("ÀB\u{0}c")]) as? String == "61620063")
        expectTrue(try value("cb_fold(5, 1)") as? Int64 == 5)
    }

    @Test func uintLeReadsOneToEightBytesLittleEndian() throws {
        expectTrue(try value("cb_uint_le(x'64')") as? Int64 == 100)
        expectTrue(try value("cb_uint_le(x'3412')") as? Int64 == 0x1234)
        expectTrue(try value("cb_uint_le(x'78563412')") as? Int64 == 0x1234_5678)
        expectTrue(try value("cb_uint_le(x'ffffffffffffff7f')") as? Int64 == .max)
        expectTrue(try value("cb_uint_le(x'0000000000000080')") as? Double == 9_223_372_036_854_775_808.0)
        expectTrue(try value("cb_uint_le(?)", [.binary(Data(repeating: 0xFF, count: 8))]) as? Double == 0x1p64)
    }

    @Test func uintLeIsNullForEmptyLongAndNonBlobValues() throws {
        for sql in ["x''", "zeroblob(0)", "x'000000000000000000'", "NULL", "'d'", "100", "1.5"] {
            expectTrue(try value("cb_uint_le(\(sql)) IS NULL") as? Int64 == 1, "\(sql)")
        }
    }

    @Test func uintLeIsDeterministicSoIndexesMayUseIt() throws {
        // SQLite refuses non-deterministic functions in index expressions.
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        try db.execute(#"CREATE INDEX "blob_number" ON "Device" (cb_uint_le("blob"))"#)
        try db.execute(#"CREATE INDEX "fold_name" ON "Device" (cb_fold("name", 3))"#)
    }

    @Test func matchesKeepsItsAnchorsAfterAnExtendedModeComment() throws {
        expectTrue(try value("cb_matches('ab', '(?x) a b  # letters', 0)") as? Int64 == 1)
        expectTrue(try value("cb_matches('abc', '(?x) a b  # letters', 0)") as? Int64 == 0)
        expectTrue(try value("cb_matches('a.', ?, 0)", [.string("\\Qa.")]) as? Int64 == 1)
        expectTrue(try value("cb_matches('a.b', ?, 0)", [.string("\\Qa.")]) as? Int64 == 0)
    }

    @Test func matchesCachesThePatternPerStatementAndStillMatchesEveryRow() throws {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        for n in 1...50 {
            try db.insert(
                ObjectID(entity: "Tag", number: Int64(n)), ["title": .string(n % 2 == 0 ? "even\(n)" : "odd\(n)")])
        }
        let fragment = SQLFragment(sql: "cb_matches(\"t\".\"title\", ?, 1)", bindings: [.string("EVEN\\d+")])
        try expectEqual(db.select("Tag", where: fragment), Set(stride(from: 2, through: 50, by: 2).map(Int64.init)))
    }
}
