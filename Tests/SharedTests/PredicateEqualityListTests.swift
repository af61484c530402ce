import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// Runs of `==` in an OR group and of `!=` in an AND group on one key path compile to one `IN`
/// list, and select exactly the objects the in-memory evaluator matches.
struct PredicateEqualityListTests {
    private let schema = SQLSchema(model: PredicateTestFixtures.model)

    private func compile(_ format: String) throws -> SQLFragment {
        try PredicateSQLCompiler.compile(
            ObjectPredicate(format: format), entity: "Device", schema: schema, alias: "t")
    }

    /// Devices 1…4 with names "Alpha", "beta", nil and "Gamma", and rssi 1…4.
    private func database() throws -> (PredicateTestDatabase, [Int64: [String: PropertyValue]]) {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        let names: [PropertyValue] = [.string("Alpha"), .string("beta"), .null, .string("Gamma")]
        var rows: [Int64: [String: PropertyValue]] = [:]
        for (index, name) in names.enumerated() {
            let number = Int64(index + 1)
            let values: [String: PropertyValue] = [
                "name": name, "address": .string("A\(number)"), "rssi": .int(number), "connected": .bool(false),
            ]
            try db.insert(PredicateTestFixtures.id("Device", number), values)
            rows[number] = values
        }
        return (db, rows)
    }

    /// Checks that SQL selects what memory matches, and returns that set.
    private func selected(_ format: String) throws -> Set<Int64> {
        let (db, rows) = try database()
        let inMemory = try Set(rows.keys.filter { try ObjectGraphFixture.matches(format, rows[$0]!) })
        let inSQL = try db.select("Device", where: compile(format))
        expectEqual(inSQL, inMemory, "\(format)")
        return inSQL
    }

    @Test func equalitiesOnOneKeyInAnOrGroupBecomeOneInList() throws {
        let fragment = try compile("rssi == 1 OR name == 'beta' OR rssi == 3 OR rssi == 9")
        expectEqual(fragment.sql.components(separatedBy: " IN (").count, 2, "\(fragment.sql)")
        expectFalse(fragment.sql.contains(#""rssi" IS ?"#), "\(fragment.sql)")
        expectEqual(fragment.bindings, [.int(1), .int(3), .int(9), .string("beta")])
        try expectEqual(selected("rssi == 1 OR name == 'beta' OR rssi == 3 OR rssi == 9"), [1, 2, 3])
    }

    @Test func inequalitiesOnOneKeyInAnAndGroupBecomeOneNegatedInList() throws {
        let fragment = try compile("name != 'Alpha' AND name != 'Gamma' AND rssi != 2")
        expectTrue(fragment.sql.hasPrefix(#"(NOT COALESCE("t"."name" IN (?, ?), 0)"#), "\(fragment.sql)")
        // A nil name differs from both, as NSPredicate has it.
        try expectEqual(selected("name != 'Alpha' AND name != 'Gamma' AND rssi != 2"), [3])
    }

    @Test func aNilInTheRunMatchesObjectsWithoutTheValue() throws {
        try expectEqual(selected("name == nil OR name == 'beta'"), [2, 3])
        try expectEqual(selected("name != nil AND name != 'beta'"), [1, 4])
    }

    @Test func comparisonsWithDifferentStringOptionsAreNotMerged() throws {
        let format = "name ==[c] 'alpha' OR name ==[c] 'GAMMA' OR name == 'Beta' OR name == 'beta'"
        let fragment = try compile(format)
        expectEqual(fragment.sql.components(separatedBy: " IN (").count, 3, "\(fragment.sql)")
        try expectEqual(selected(format), [1, 2, 4])
    }

    @Test func aLoneComparisonAndOtherOperatorsStayAsWritten() throws {
        try expectEqual(compile("rssi == 1 OR name == 'x'").sql, #"("t"."rssi" IS ? OR "t"."name" IS ?)"#)
        try expectEqual(compile("rssi != 1 OR rssi != 2").sql, #"("t"."rssi" IS NOT ? OR "t"."rssi" IS NOT ?)"#)
        try expectEqual(compile("rssi == 1 AND rssi == 2").sql, #"("t"."rssi" IS ? AND "t"."rssi" IS ?)"#)
        try expectEqual(selected("rssi != 1 OR rssi != 2"), [1, 2, 3, 4])
    }

    @Test func thousandsOfInequalitiesBecomeOneListWithEveryValueBound() throws {
        let format = (0..<2_000).map { "address != 'B\($0)'" }.joined(separator: " AND ") + " AND address != 'A2'"
        let fragment = try compile(format)
        expectFalse(fragment.sql.contains("IS NOT"))
        expectEqual(fragment.bindings.count, 2_001)
        try expectEqual(selected(format), [1, 3, 4])
    }
}
