import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct PredicateValidationTests {
    private func validationError(_ format: String, entity: String = "Device") -> ObjectPredicateError? {
        do {
            try ObjectPredicate(format: format).validate(for: entity, in: PredicateTestFixtures.model)
            return nil
        } catch let error as ObjectPredicateError {
            return error
        } catch {
            Issue.record("\(format) did not parse: \(error)")
            return nil
        }
    }

    @Test func acceptsWellTypedPredicates() {
        for format in [
            "name BEGINSWITH[cd] 'th' AND rssi > -70.5 AND connected == YES",
            "ANY readings.value > 5 OR readings.@count == 0 OR ALL readings.label LIKE 'a*'",
            "lastSeen > '2026-01-01T00:00:00Z' AND serial != nil AND config == nil",
            "rssi == $r AND name IN $names AND lastSeen BETWEEN {$a, $b}",
            "ANY tags.devices.name == 'x'",
            "readings CONTAINS 'Reading/3'",
            "blob > 5 AND blob BETWEEN {0, 255.5} AND blob IN {1, nil} AND blob != rssi",
            "ANY readings.payload >= 1 OR blob == 'AQID' OR blob > $min",
            "name MATCHES '(?x) a b  # a comment' OR name MATCHES '\\\\Qa.b'",
        ] {
            expectNil(validationError(format), "\(format)")
        }
        expectNil(validationError("device.name == 'x' AND device == 'Device/2'", entity: "Reading"))
    }

    @Test(arguments: [
        ("nosuch == 1", ObjectPredicateError.unknownKey(keyPath: "nosuch", entity: "Device", key: "nosuch")),
        ("readings.nosuch == 1", .unknownKey(keyPath: "readings.nosuch", entity: "Reading", key: "nosuch")),
        ("name.length == 1", .notARelationship(keyPath: "name.length", key: "name")),
        ("name.@count == 1", .countOfNonToMany(keyPath: "name")),
        ("ANY name == 'x'", .quantifierWithoutToMany(keyPath: "name")),
        ("name == 5", .typeMismatch(keyPath: "name", expected: "a string", value: "5")),
        ("rssi == 'five'", .typeMismatch(keyPath: "rssi", expected: "an int", value: "\"five\"")),
        ("connected == 2", .typeMismatch(keyPath: "connected", expected: "a bool", value: "2")),
        ("lastSeen == 'yesterday'", .invalidLiteral(keyPath: "lastSeen", expected: "a date", value: "\"yesterday\"")),
        ("serial == 'abc'", .invalidLiteral(keyPath: "serial", expected: "a uuid", value: "\"abc\"")),
        ("rssi BEGINSWITH '1'", .unsupportedOperator(keyPath: "rssi", operator: "BEGINSWITH", type: "an int")),
        ("name MATCHES '(unclosed'", .invalidRegularExpression(pattern: "(unclosed")),
        ("name MATCHES 'a)('", .invalidRegularExpression(pattern: "a)(")),
        ("rssi IN 5", .invalidList(operator: "IN", reason: "needs a list {…} or a variable bound to an array")),
        ("rssi BETWEEN {1}", .invalidList(operator: "BETWEEN", reason: "needs exactly two values {low, high}")),
        ("rssi == {1}", .invalidList(operator: "==", reason: "a list is only allowed after IN or BETWEEN")),
        ("rssi IN {weight}", .invalidList(operator: "IN", reason: "a list may hold only values and variables")),
        ("ANY readings.value == tags.title", .twoCollections(lhs: "readings.value", rhs: "tags.title")),
        ("name == rssi", .typeMismatch(keyPath: "name", expected: "a string", value: "'rssi' (an int)")),
        ("blob IN {1, 'AQID'}", .typeMismatch(keyPath: "blob", expected: "a binary", value: "1")),
        ("blob == TRUE", .typeMismatch(keyPath: "blob", expected: "a binary", value: "TRUE")),
        ("blob CONTAINS 5", .unsupportedOperator(keyPath: "blob", operator: "CONTAINS", type: "a binary")),
        ("blob == name", .typeMismatch(keyPath: "blob", expected: "a binary", value: "'name' (a string)")),
    ])
    func rejectsPredicatesThatCanNeverWork(format: String, expected: ObjectPredicateError) {
        expectEqual(validationError(format), expected)
    }

    @Test func rejectsOrderingAndMismatchedEntitiesOnRelationships() {
        expectEqual(
            validationError("device < 'Device/1'", entity: "Reading"),
            .unsupportedOperator(keyPath: "device", operator: "<", type: "a relationship to Device"))
        expectEqual(
            validationError("device == 'Reading/1'", entity: "Reading"),
            .typeMismatch(keyPath: "device", expected: "a relationship to Device", value: "\"Reading/1\""))
        expectEqual(
            validationError("device == 'nonsense'", entity: "Reading"),
            .invalidLiteral(keyPath: "device", expected: "a relationship to Device", value: "\"nonsense\""))
        expectEqual(
            validationError("config == 'x'"),
            .typeMismatch(
                keyPath: "config", expected: "a json attribute (compared only with nil)", value: "\"x\""))
    }

    @Test func rejectsUnknownEntities() {
        expectEqual(validationError("TRUEPREDICATE", entity: "Nope"), .unknownEntity("Nope"))
    }

    @Test func reportsErrorsEvenAfterADecisiveConstant() {
        expectNotNil(validationError("FALSEPREDICATE AND nosuch == 1"))
    }

    @Test func rejectsDeepProgrammaticNestingWithoutRecursing() {
        var predicate = ObjectPredicate.constant(true)
        for _ in 0..<5_000 { predicate = .not(predicate) }
        #expect(throws: ObjectPredicateError.nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth)) {
            try predicate.validate(for: "Device", in: PredicateTestFixtures.model)
        }
        #expect(throws: ObjectPredicateError.nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth)) {
            _ = try predicate.binding([:])
        }
    }

    @Test func errorsDescribeThemselvesOnOneLine() {
        let error = ObjectPredicateError.typeMismatch(keyPath: "name", expected: "a string", value: "5")
        expectEqual(error.description, "predicate: 'name' is a string and can never match 5")
        expectFalse(ObjectPredicateError.unboundVariable("x").description.contains("\n"))
    }
}
