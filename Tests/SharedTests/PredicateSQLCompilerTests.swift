import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

struct PredicateSQLCompilerTests {
    private let schema = SQLSchema(model: PredicateTestFixtures.model)

    private func compile(
        _ format: String, entity: String = "Device", _ arguments: [String: PropertyValue] = [:]
    )
        throws -> SQLFragment
    {
        try PredicateSQLCompiler.compile(
            ObjectPredicate(format: format).binding(arguments), entity: entity, schema: schema, alias: "t")
    }

    @Test func compilesEqualityToANullSafeComparisonWithABoundValue() throws {
        let fragment = try compile("rssi == 5")
        expectEqual(fragment.sql, #""t"."rssi" IS ?"#)
        expectEqual(fragment.bindings, [.int(5)])
        try expectEqual(compile("name == nil").sql, #""t"."name" IS NULL"#)
        try expectEqual(compile("rssi < 5").sql, #"COALESCE("t"."rssi" < ?, 0)"#)
    }

    @Test func bindsValuesInTheConventionsOfTheSchema() throws {
        let fragment = try compile(
            "lastSeen > '1970-01-01T00:00:10Z' AND connected == YES AND serial == 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'"
        )
        expectEqual(
            fragment.bindings,
            [
                .date(Date(timeIntervalSince1970: 10)), .bool(true), .string("e621e1f8-c36c-495a-93fc-0c247a3e6e5f"),
            ])
        expectEqual(
            try compile("device == 'Reading/3'".replacingOccurrences(of: "Reading", with: "Device"), entity: "Reading")
                .bindings, [.int(3)])
        try expectEqual(compile("name ==[cd] 'CRÈME'").bindings, [.string("creme")])
    }

    @Test func neverSplicesValuesIntoTheSQLText() throws {
        let hostile = "x'); DROP TABLE \"Device\"; --"
        let fragment = try compile(
            "name == $n OR name BEGINSWITH $n OR name CONTAINS $n OR rssi IN {123456, 654321}", ["n": .string(hostile)])
        expectFalse(fragment.sql.contains("DROP"))
        expectFalse(fragment.sql.contains("123456"))
        expectFalse(fragment.sql.contains("654321"))
        expectEqual(fragment.bindings.filter { $0 == .string(hostile) }.count, 3)

        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        try db.insert(
            PredicateTestFixtures.id("Device", 1),
            ["name": .string(hostile), "address": .string("a"), "rssi": .int(1), "connected": .bool(false)])
        try expectEqual(db.select("Device", where: fragment), [1])
        try expectEqual(db.select("Device", where: compile("name == 'x'")), [])
    }

    @Test func readsBinaryComparedWithNumbersThroughCbUintLeWithBoundValues() throws {
        let fragment = try compile("blob > $min", ["min": .int(5)])
        expectEqual(fragment.sql, #"COALESCE(cb_uint_le("t"."blob") > ?, 0)"#)
        expectEqual(fragment.bindings, [.int(5)])
        try expectEqual(compile("blob == 4660").sql, #"cb_uint_le("t"."blob") IS ?"#)
        expectEqual(try compile("blob IN {1, 2.5}").bindings, [.int(1), .double(2.5)])
        try expectEqual(compile("blob > rssi").sql, #"COALESCE(cb_uint_le("t"."blob") > "t"."rssi", 0)"#)
        expectEqual(
            try compile("ANY readings.payload > 5").sql,
            #"EXISTS (SELECT 1 FROM "Reading" AS "t_1" WHERE "t_1"."device" = "t"."Z_PK" AND COALESCE(cb_uint_le("t_1"."payload") > ?, 0))"#
        )
        // A string stays base64 bytes, compared without the function.
        let bytes = try compile("blob == 'AQID'")
        expectEqual(bytes.sql, #""t"."blob" IS ?"#)
        expectEqual(bytes.bindings, [.binary(Data([1, 2, 3]))])
    }

    @Test func selectsBinaryComparedWithNumbersAsTheEvaluatorDoes() throws {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        let blobs: [Int64: PropertyValue] = [
            1: .binary(Data([0x64])), 2: .binary(Data([0x34, 0x12])), 3: .binary(Data([0x78, 0x56, 0x34, 0x12])),
            4: .binary(Data(repeating: 0xFF, count: 8)), 5: .binary(Data()), 6: .binary(Data(repeating: 0, count: 9)),
            7: .null, 8: .binary(Data([0x05])),
        ]
        var graph = ObjectGraphFixture()
        for (n, blob) in blobs {
            let values: [String: PropertyValue] = [
                "address": .string("a"), "rssi": .int(100), "connected": .bool(false), "blob": blob,
            ]
            try db.insert(PredicateTestFixtures.id("Device", n), values)
            graph.objects[PredicateTestFixtures.id("Device", n)] = values
        }
        let cases: [(String, Set<Int64>)] = [
            ("blob > 5", [1, 2, 3, 4]),
            ("blob == 100", [1]),
            ("blob != 100", [2, 3, 4, 5, 6, 7, 8]),
            ("blob == 4660 OR blob == 305419896", [2, 3]),
            ("blob <= 5", [8]),
            ("NOT blob > 5", [5, 6, 7, 8]),
            ("blob BETWEEN {5, 4660}", [1, 2, 8]),
            ("blob IN {5, 100, nil}", [1, 5, 6, 7, 8]),
            ("blob > 9223372036854775807", [4]),
            ("blob == 18446744073709551615", [4]),
            ("blob >= rssi", [1, 2, 3, 4]),
            ("blob == nil", [7]),
            ("blob == 'BQ=='", [8]),
        ]
        for (format, expected) in cases {
            try expectEqual(db.select("Device", where: compile(format)), expected, "SQL: \(format)")
            let memory = try Set(
                blobs.keys.filter { try graph.matches(format, PredicateTestFixtures.id("Device", $0)) })
            expectEqual(memory, expected, "memory: \(format)")
        }
    }

    @Test func quotedLiteralsInTheFormatStayBound() throws {
        let fragment = try compile(#"name == 'a\' OR 1=1 --' OR name == "\" OR \"1\"=\"1""#)
        expectFalse(fragment.sql.contains("1=1"))
        expectEqual(fragment.bindings.count, 2)
    }

    @Test func walksToOneRelationshipsWithCorrelatedSubqueries() throws {
        let fragment = try compile("device.name == 'x'", entity: "Reading")
        expectEqual(
            fragment.sql, #"(SELECT "t_1"."name" FROM "Device" AS "t_1" WHERE "t_1"."Z_PK" = "t"."device") IS ?"#)
    }

    @Test func quantifiesWithExistsSubqueries() throws {
        expectEqual(
            try compile("ANY readings.value > 5").sql,
            #"EXISTS (SELECT 1 FROM "Reading" AS "t_1" WHERE "t_1"."device" = "t"."Z_PK" AND COALESCE("t_1"."value" > ?, 0))"#
        )
        expectTrue(try compile("ALL readings.value > 5").sql.hasPrefix("NOT EXISTS ("))
        expectTrue(try compile("ALL readings.value > 5").sql.contains(" AND NOT COALESCE("))
        expectTrue(try compile("ANY tags.title == 'x'").sql.contains(#""Z_M2M_Device_tags" AS "t_2", "Tag" AS "t_1""#))
        expectTrue(try compile("readings.@count > 2").sql.contains("SELECT COUNT(*) FROM \"Reading\""))
    }

    @Test func compilesLongAndDeepPredicatesThatSQLiteAccepts() throws {
        let db = try PredicateTestDatabase(model: PredicateTestFixtures.model)
        try db.insert(
            PredicateTestFixtures.id("Device", 7),
            ["address": .string("a"), "rssi": .int(9_999), "connected": .bool(false)])
        let wide = (0..<10_000).map { "rssi == \($0)" }.joined(separator: " OR ")
        let fragment = try compile(wide)
        expectEqual(fragment.bindings.count, 10_000)
        try expectEqual(db.select("Device", where: fragment), [7])

        // Each level is one NOT and one parenthesis.
        let depth = ObjectPredicate.maximumNestingDepth / 2 - 1
        let deep =
            String(repeating: "NOT (rssi == 1 OR ", count: depth) + "rssi == 9999"
            + String(repeating: ")", count: depth)
        let expected: Set<Int64> = depth % 2 == 0 ? [7] : []
        try expectEqual(db.select("Device", where: compile(deep)), expected)

        let groups = ObjectPredicate.maximumNestingDepth
        let nested =
            String(repeating: "(rssi == 1 OR ANY readings.device.name BEGINSWITH 'x' OR ", count: groups)
            + "rssi == 9999"
            + String(repeating: ")", count: groups)
        try expectEqual(db.select("Device", where: compile(nested)), [7])
    }

    @Test func refusesSQLTooDeepForSQLiteInsteadOfFailingInSQLite() throws {
        // Built in code: 20 alternating AND/OR groups, each too wide for one flat SQL chain, so
        // each becomes two nested SQL groups. Memory evaluation takes it; SQL refuses it. (The
        // filler uses `<`: equalities on one key would merge into one IN list.)
        var predicate = try ObjectPredicate(format: "rssi == 1")
        let filler = try (0..<40).map { try ObjectPredicate(format: "rssi < \($0 + 2)") }
        for level in 0..<20 {
            predicate = level % 2 == 0 ? .and(filler + [predicate]) : .or(filler + [predicate])
        }
        #expect(throws: ObjectPredicateError.nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth)) {
            try PredicateSQLCompiler.compile(predicate, entity: "Device", schema: schema, alias: "t")
        }
        expectTrue(
            try predicate.evaluate(
                values: ["rssi": .int(1)], entity: "Device", in: PredicateTestFixtures.model, lookup: { _ in nil }))
    }

    @Test func rejectsWhatValidationRejectsAndUnboundVariables() {
        #expect(throws: ObjectPredicateError.unboundVariable("x")) {
            try PredicateSQLCompiler.compile(
                ObjectPredicate(format: "rssi == $x"), entity: "Device", schema: schema, alias: "t")
        }
        #expect(throws: ObjectPredicateError.typeMismatch(keyPath: "name", expected: "a string", value: "1")) {
            try compile("name == 1")
        }
    }

    @Test func foldsConstantComparisonsAway() throws {
        try expectEqual(compile("1 == 1").sql, "1")
        try expectEqual(compile("FALSEPREDICATE OR 'a' BEGINSWITH 'b'").sql, "0")
        try expectEqual(compile("TRUEPREDICATE AND rssi == 1").sql, #""t"."rssi" IS ?"#)
    }
}
