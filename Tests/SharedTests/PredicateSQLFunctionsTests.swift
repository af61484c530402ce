import Foundation
import Shared
import Testing

@Suite struct PredicateSQLFunctionsTests {
    private func value(_ sql: String, _ bindings: [PropertyValue] = []) throws -> Any? {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        return try db.rows("SELECT " + sql, bindings).first ?? nil
    }

    @Test func stringFunctionsReturnZeroOrOneNeverNull() throws {
        #expect(try value("cb_beginswith('Crème', 'CRE', 3)") as? Int64 == 1)
        #expect(try value("cb_endswith('abc', 'bc', 0)") as? Int64 == 1)
        #expect(try value("cb_contains('abc', 'B', 0)") as? Int64 == 0)
        #expect(try value("cb_like('a*b', 'a\\*?', 0)") as? Int64 == 1)
        #expect(try value("cb_matches('ab12', '[a-z]+\\d+', 0)") as? Int64 == 1)
        #expect(try value("cb_contains(NULL, 'a', 0)") as? Int64 == 0)
        #expect(try value("cb_contains(12, '1', 0)") as? Int64 == 0)
        #expect(try value("cb_matches('x', '(', 0)") as? Int64 == 0)
    }

    @Test func foldKeepsNullAndEmptyStringsApart() throws {
        #expect(try value("cb_fold(NULL, 1) IS NULL") as? Int64 == 1)
        #expect(try value("cb_fold('', 1) IS ''") as? Int64 == 1)
        #expect(try value("hex(cb_fold(?, 3))", [.string("ÀB\u{0}c")]) as? String == "61620063")
        #expect(try value("cb_fold(5, 1)") as? Int64 == 5)
    }

    @Test func matchesCachesThePatternPerStatementAndStillMatchesEveryRow() throws {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        for n in 1...50 {
            try db.insert(
                ObjectID(entity: "Tag", number: Int64(n)), ["title": .string(n % 2 == 0 ? "even\(n)" : "odd\(n)")])
        }
        let fragment = SQLFragment(sql: "cb_matches(\"t\".\"title\", ?, 1)", bindings: [.string("EVEN\\d+")])
        #expect(try db.select("Tag", where: fragment) == Set(stride(from: 2, through: 50, by: 2).map(Int64.init)))
    }
}
