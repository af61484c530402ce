import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct PredicateParserTests {
    private func parse(_ format: String) throws -> ObjectPredicate { try ObjectPredicate(format: format) }

    private func cmp(
        _ lhs: PredicateOperand, _ op: ObjectPredicate.ComparisonOperator, _ rhs: PredicateOperand,
        quantifier: ObjectPredicate.Quantifier? = nil, options: ObjectPredicate.StringOptions = []
    ) -> ObjectPredicate {
        .comparison(.init(lhs, op, rhs, quantifier: quantifier, options: options))
    }

    private func key(_ path: String) -> PredicateOperand { .keyPath(path.split(separator: ".").map(String.init)) }

    private func syntaxError(_ format: String) -> PredicateSyntaxError? {
        do {
            _ = try ObjectPredicate(format: format)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("rssi == 5", ObjectPredicate.ComparisonOperator.equal),
        ("rssi = 5", .equal),
        ("rssi != 5", .notEqual),
        ("rssi <> 5", .notEqual),
        ("rssi < 5", .less),
        ("rssi <= 5", .lessOrEqual),
        ("rssi =< 5", .lessOrEqual),
        ("rssi > 5", .greater),
        ("rssi >= 5", .greaterOrEqual),
        ("rssi => 5", .greaterOrEqual),
    ])
    func parsesSymbolicOperatorsAndTheirSynonyms(format: String, op: ObjectPredicate.ComparisonOperator) throws {
        try expectEqual(parse(format), cmp(key("rssi"), op, .literal(.int(5))))
    }

    @Test(arguments: [
        ("name BEGINSWITH 'a'", ObjectPredicate.ComparisonOperator.beginsWith),
        ("name endswith 'a'", .endsWith),
        ("name Contains 'a'", .contains),
        ("name LIKE 'a'", .like),
        ("name matches 'a'", .matches),
    ])
    func parsesStringOperatorsInAnyCase(format: String, op: ObjectPredicate.ComparisonOperator) throws {
        try expectEqual(parse(format), cmp(key("name"), op, .literal(.string("a"))))
    }

    @Test func parsesStringOptions() throws {
        expectEqual(
            try parse("name ==[c] 'a'"), cmp(key("name"), .equal, .literal(.string("a")), options: .caseInsensitive))
        expectEqual(
            try parse("name CONTAINS[d] 'a'"),
            cmp(key("name"), .contains, .literal(.string("a")), options: .diacriticInsensitive))
        expectEqual(
            try parse("name LIKE[cd] 'a'"),
            cmp(key("name"), .like, .literal(.string("a")), options: [.caseInsensitive, .diacriticInsensitive]))
        expectEqual(syntaxError("name LIKE[x] 'a'")?.position, 10)
    }

    @Test func parsesLiterals() throws {
        try expectEqual(parse("a == 42"), cmp(key("a"), .equal, .literal(.int(42))))
        try expectEqual(parse("a == -42"), cmp(key("a"), .equal, .literal(.int(-42))))
        try expectEqual(parse("a == 2.5"), cmp(key("a"), .equal, .literal(.double(2.5))))
        try expectEqual(parse("a == -1.5e3"), cmp(key("a"), .equal, .literal(.double(-1500))))
        try expectEqual(parse("a == 1E-2"), cmp(key("a"), .equal, .literal(.double(0.01))))
        expectEqual(try parse("a == -9223372036854775808"), cmp(key("a"), .equal, .literal(.int(Int64.min))))
        try expectEqual(parse("a == 99999999999999999999"), cmp(key("a"), .equal, .literal(.double(1e20))))
        try expectEqual(parse("a == 'x'"), cmp(key("a"), .equal, .literal(.string("x"))))
        try expectEqual(parse("a == \"x\""), cmp(key("a"), .equal, .literal(.string("x"))))
        try expectEqual(parse("a == nil"), cmp(key("a"), .equal, .literal(.null)))
        try expectEqual(parse("a == NULL"), cmp(key("a"), .equal, .literal(.null)))
        for (word, value) in [("true", true), ("YES", true), ("False", false), ("no", false)] {
            try expectEqual(parse("a == \(word)"), cmp(key("a"), .equal, .literal(.bool(value))))
        }
    }

    @Test func processesStringEscapesAndKeepsUnknownOnes() throws {
        expectEqual(
            try parse(#"a == 'it\'s \"q\" \\ \n\t\u00e9'"#),
            cmp(key("a"), .equal, .literal(.string("it's \"q\" \\ \n\t\u{e9}"))))
        try expectEqual(parse(#"a MATCHES '\d+\*'"#), cmp(key("a"), .matches, .literal(.string(#"\d+\*"#))))
        try expectEqual(parse(#"a == "say 'hi'""#), cmp(key("a"), .equal, .literal(.string("say 'hi'"))))
    }

    @Test func parsesKeyPathsCountsVariablesAndLists() throws {
        try expectEqual(parse("device.name == $n"), cmp(key("device.name"), .equal, .variable("n")))
        try expectEqual(parse("readings.@count > 2"), cmp(.count(["readings"]), .greater, .literal(.int(2))))
        expectEqual(
            try parse("rssi IN {1, -2, 'x', nil}"),
            cmp(
                key("rssi"), .in,
                .list([.literal(.int(1)), .literal(.int(-2)), .literal(.string("x")), .literal(.null)])))
        expectEqual(try parse("rssi IN {}"), cmp(key("rssi"), .in, .list([])))
        try expectEqual(parse("rssi IN $list"), cmp(key("rssi"), .in, .variable("list")))
        expectEqual(
            try parse("rssi BETWEEN {$low, 9}"),
            cmp(key("rssi"), .between, .list([.variable("low"), .literal(.int(9))])))
        try expectEqual(parse("#in == 1"), cmp(key("in"), .equal, .literal(.int(1))))
        try expectEqual(parse("5 < rssi"), cmp(.literal(.int(5)), .less, key("rssi")))
    }

    @Test func parsesQuantifiers() throws {
        expectEqual(
            try parse("ANY readings.value > 5"),
            cmp(key("readings.value"), .greater, .literal(.int(5)), quantifier: .any))
        expectEqual(
            try parse("some readings.value > 5"),
            cmp(key("readings.value"), .greater, .literal(.int(5)), quantifier: .any))
        expectEqual(
            try parse("ALL readings.value > 5"),
            cmp(key("readings.value"), .greater, .literal(.int(5)), quantifier: .all))
        expectEqual(
            try parse("NONE readings.value > 5"),
            .not(cmp(key("readings.value"), .greater, .literal(.int(5)), quantifier: .any)))
    }

    @Test func parsesConstantsAndLogicalOperators() throws {
        let a = cmp(key("a"), .equal, .literal(.int(1)))
        let b = cmp(key("b"), .equal, .literal(.int(2)))
        try expectEqual(parse("TRUEPREDICATE"), .constant(true))
        try expectEqual(parse("falsepredicate"), .constant(false))
        try expectEqual(parse("a == 1 && b == 2"), .and([a, b]))
        try expectEqual(parse("a == 1 || b == 2"), .or([a, b]))
        try expectEqual(parse("!a == 1"), .not(a))
        try expectEqual(parse("NOT NOT a == 1"), .not(.not(a)))
        try expectEqual(parse("a == 1 and b == 2 AND a == 1"), .and([a, b, a]))
    }

    @Test func followsNSPredicatePrecedence() throws {
        let a = cmp(key("a"), .equal, .literal(.int(1)))
        let b = cmp(key("b"), .equal, .literal(.int(2)))
        let c = cmp(key("c"), .equal, .literal(.int(3)))
        try expectEqual(parse("a == 1 OR b == 2 AND c == 3"), .or([a, .and([b, c])]))
        try expectEqual(parse("a == 1 AND b == 2 OR c == 3"), .or([.and([a, b]), c]))
        try expectEqual(parse("NOT a == 1 AND b == 2"), .and([.not(a), b]))
        try expectEqual(parse("NOT (a == 1 AND b == 2)"), .not(.and([a, b])))
        try expectEqual(parse("(a == 1 OR b == 2) AND c == 3"), .and([.or([a, b]), c]))
        try expectEqual(parse("((((a == 1))))"), a)
    }

    @Test(arguments: [
        ("value >", 7, "after '>'"),
        ("name == 'x'; DROP TABLE Device", 11, "unexpected character ';'"),
        ("(a == 1", 0, "unbalanced '('"),
        ("a == 1)", 6, "unbalanced ')'"),
        ("a ~ 1", 2, "unexpected character '~'"),
        ("a === 1", 4, "found '='"),
        ("a == 'abc", 5, "unterminated string"),
        ("a", 1, "expected a comparison operator"),
        ("a 1", 2, "expected a comparison operator"),
        ("", 0, "empty"),
        ("a == 1 AND", 10, "expected a key path"),
        ("a == 1 b == 2", 7, "after a complete predicate"),
        ("readings.@sum > 1", 9, "@sum"),
        ("a.@count.b > 1", 8, "must end"),
        ("AND == 1", 0, "unexpected keyword"),
        ("a == {1, 2", 10, "expected ',' or '}'"),
        ("a == 1e", 6, "exponent"),
        ("a == $", 5, "expected a name"),
        ("a == 12abc", 7, "after the number"),
        ("() ", 1, "expected a key path"),
    ])
    func reportsErrorPositions(format: String, position: Int, message: String) {
        let error = syntaxError(format)
        expectEqual(error?.position, position, "\(format): \(String(describing: error))")
        expectEqual(error?.message.contains(message), true, "\(format): \(String(describing: error))")
    }

    @Test func errorPositionCountsUnicodeScalars() {
        expectEqual(syntaxError("name == 'é' ;")?.position, 12)
    }

    @Test func hostileNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "(", count: 10_000) + "a == 1" + String(repeating: ")", count: 10_000)
        expectEqual(syntaxError(deep)?.message.contains("deeper than"), true)
        let nots = String(repeating: "NOT ", count: 10_000) + "a == 1"
        expectEqual(syntaxError(nots)?.message.contains("deeper than"), true)
        let lists = "a IN " + String(repeating: "{", count: 10_000)
        expectEqual(syntaxError(lists)?.message.contains("deeper than"), true)
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        let depth = ObjectPredicate.maximumNestingDepth
        let format =
            String(repeating: "(a == 1 AND ", count: depth - 1) + "a == 1" + String(repeating: ")", count: depth - 1)
        var predicate = try parse(format)
        var levels = 0
        while case .and(let items) = predicate {
            levels += 1
            predicate = items[1]
        }
        expectEqual(levels, depth - 1)
    }

    @Test func parsesTenThousandClausesIntoOneFlatList() throws {
        let format = (0..<10_000).map { "a == \($0)" }.joined(separator: " OR ")
        guard case .or(let items) = try parse(format) else {
            Issue.record("expected OR")
            return
        }
        expectEqual(items.count, 10_000)
        expectEqual(items[9_999], cmp(key("a"), .equal, .literal(.int(9_999))))
    }

    @Test(arguments: [
        "a == 1",
        "NOT (a == 1 OR b != 'x\\\\y\"z') AND c BETWEEN {1, 2.5}",
        "ANY readings.value >=[cd] $v",
        "ALL readings.label LIKE[c] \"a*\\\\*\" OR readings.@count < -3",
        "NOT NOT TRUEPREDICATE AND (FALSEPREDICATE OR #in IN {nil, TRUE, 'q'})",
        "name MATCHES '\\\\d+\\n'",
    ])
    func formatsBackToAnEqualPredicate(format: String) throws {
        let predicate = try parse(format)
        try expectEqual(parse(predicate.predicateFormat), predicate, "\(predicate.predicateFormat)")
    }
}
