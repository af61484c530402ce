import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct PredicateEvaluatorTests {
    private func matches(
        _ format: String, _ values: [String: PropertyValue], entity: String = "Device",
        _ arguments: [String: PropertyValue] = [:]
    ) throws -> Bool {
        try ObjectGraphFixture.matches(format, values, entity: entity, arguments)
    }

    private let device: [String: PropertyValue] = [
        "name": .string("Thermometer"), "address": .string("AA:BB"), "rssi": .int(-60), "weight": .double(2.5),
        "connected": .bool(true), "lastSeen": .date(Date(timeIntervalSince1970: 1_000)),
        "serial": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        "blob": .binary(Data([1, 2, 3])),
    ]

    /// A device with two readings and a tag, plus a reading without a device.
    private func makeGraph() -> ObjectGraphFixture {
        var graph = ObjectGraphFixture()
        let d1 = PredicateTestFixtures.id("Device", 1)
        var values = device
        values["readings"] = .references([
            PredicateTestFixtures.id("Reading", 1), PredicateTestFixtures.id("Reading", 2),
        ])
        values["tags"] = .references([PredicateTestFixtures.id("Tag", 1)])
        graph.objects[d1] = values
        graph.objects[PredicateTestFixtures.id("Device", 2)] = [
            "name": .null, "rssi": .int(0), "connected": .bool(false), "readings": .references([]),
            "tags": .references([]),
        ]
        graph.objects[PredicateTestFixtures.id("Reading", 1)] = [
            "value": .double(3), "label": .string("a"), "time": .date(Date(timeIntervalSince1970: 10)),
            "device": .reference(d1),
        ]
        graph.objects[PredicateTestFixtures.id("Reading", 2)] = [
            "value": .double(7), "label": .null, "time": .date(Date(timeIntervalSince1970: 20)),
            "device": .reference(d1),
        ]
        graph.objects[PredicateTestFixtures.id("Reading", 3)] = [
            "value": .null, "time": .date(Date(timeIntervalSince1970: 30)), "device": .null,
        ]
        graph.objects[PredicateTestFixtures.id("Tag", 1)] = [
            "title": .string("kitchen"), "devices": .references([d1]),
        ]
        return graph
    }

    @Test func comparesNumbersAcrossIntAndDouble() throws {
        expectTrue(try matches("rssi == -60.0", device))
        expectTrue(try matches("rssi < -59.5", device))
        expectTrue(try !matches("rssi > -59.5", device))
        expectTrue(try matches("weight > 2", device))
        expectTrue(try matches("weight == 2.5 AND weight != 2", device))
        expectTrue(try matches("weight >= 2.5 AND weight <= 2.5", device))
        expectTrue(try matches("-61 < rssi", device))
        expectTrue(try matches("rssi == 9007199254740993", ["rssi": .int(9_007_199_254_740_993)]))
        expectTrue(try !matches("rssi == 9007199254740992.0", ["rssi": .int(9_007_199_254_740_993)]))
    }

    @Test func followsNSPredicateNilSemantics() throws {
        let none: [String: PropertyValue] = ["rssi": .int(1)]
        expectTrue(try matches("name == nil", none))
        expectTrue(try matches("name == nil", ["name": .null]))
        expectTrue(try !matches("name != nil", none))
        expectTrue(try matches("weight != 5", none))
        expectTrue(try !matches("weight == 5", none))
        expectTrue(try !matches("weight < 5", none))
        expectTrue(try !matches("weight >= 5", none))
        expectTrue(try matches("NOT (weight < 5)", none))
        expectTrue(try !matches("weight BETWEEN {0, 10}", none))
        expectTrue(try !matches("name BEGINSWITH 'a'", none))
        expectTrue(try matches("NOT name CONTAINS 'a'", none))
        expectTrue(try matches("weight IN {1, nil}", none))
        expectTrue(try !matches("weight IN {1, 2}", none))
        expectTrue(try !matches("rssi < nil", device))
        expectTrue(try matches("rssi != nil", device))
    }

    @Test func treatsNaNAsNil() throws {
        expectTrue(try matches("weight == nil", ["weight": .double(.nan)]))
        expectTrue(try !matches("weight > 0", ["weight": .double(.nan)]))
    }

    @Test func betweenIsInclusive() throws {
        expectTrue(try matches("rssi BETWEEN {-60, -50}", device))
        expectTrue(try matches("rssi BETWEEN {-70, -60}", device))
        expectTrue(try !matches("rssi BETWEEN {-59, -50}", device))
        expectTrue(try matches("rssi BETWEEN $r", device, ["r": .json(.array([.int(-61), .double(-59.5)]))]))
    }

    @Test func inAcceptsLiteralListsJSONArraysAndReferences() throws {
        expectTrue(try matches("rssi IN {1, -60}", device))
        expectTrue(try !matches("rssi IN {}", device))
        expectTrue(
            try matches("name IN $names", device, ["names": .json(.array([.string("x"), .string("Thermometer")]))]))
        expectTrue(try !matches("name IN $names", device, ["names": .json(.array([]))]))
        let graph = makeGraph()
        let r1 = PredicateTestFixtures.id("Reading", 1)
        expectTrue(try graph.matches("device IN $ds", r1, ["ds": .references([PredicateTestFixtures.id("Device", 1)])]))
        expectTrue(
            try !graph.matches("device IN $ds", r1, ["ds": .references([PredicateTestFixtures.id("Device", 2)])]))
        expectTrue(try matches("name IN[c] {'THERMOMETER'}", device))
    }

    @Test func stringOperatorsHonourCaseAndDiacriticOptions() throws {
        let v: [String: PropertyValue] = ["name": .string("Crème Brûlée")]
        expectTrue(try matches("name BEGINSWITH 'Crème'", v))
        expectTrue(try !matches("name BEGINSWITH 'creme'", v))
        expectTrue(try !matches("name BEGINSWITH[c] 'creme'", v))
        expectTrue(try !matches("name BEGINSWITH[d] 'creme'", v))
        expectTrue(try matches("name BEGINSWITH[cd] 'creme'", v))
        expectTrue(try matches("name ENDSWITH[d] 'Brulee'", v))
        expectTrue(try matches("name CONTAINS[c] 'ME BR'", v))
        expectTrue(try !matches("name CONTAINS 'ME BR'", v))
        expectTrue(try matches("name ==[cd] 'CREME BRULEE'", v))
        expectTrue(try !matches("name == 'CREME BRULEE'", v))
        expectTrue(try matches("name !=[c] 'x'", v))
        expectTrue(try !matches("name CONTAINS ''", v))
        expectTrue(try matches("name ==[c] 'STRASSE'", ["name": .string("straße")]))
        expectTrue(try !matches("name == 'STRASSE'", ["name": .string("straße")]))
        expectTrue(try !matches("name BEGINSWITH ''", v))
    }

    @Test func comparesStringsByUnicodeScalarsNotCanonicalEquivalence() throws {
        let decomposed: [String: PropertyValue] = ["name": .string("e\u{301}")]
        expectTrue(try !matches("name == '\u{e9}'", decomposed))
        expectTrue(try matches("name ==[d] 'e'", decomposed))
        expectTrue(try matches("name < 'f'", decomposed))
        expectTrue(try matches("name > 'Z'", ["name": .string("a")]))
    }

    @Test func likeMatchesWildcardsOverTheWholeString() throws {
        let v: [String: PropertyValue] = ["name": .string("a*bc")]
        expectTrue(try matches("name LIKE 'a*'", v))
        expectTrue(try matches("name LIKE '?*?c'", v))
        expectTrue(try matches("name LIKE 'a\\\\*bc'", v))
        expectTrue(try !matches("name LIKE 'a\\\\*c'", v))
        expectTrue(try !matches("name LIKE 'a'", v))
        expectTrue(try matches("name LIKE[c] 'A*BC'", v))
        expectTrue(try matches("name LIKE '*'", ["name": .string("")]))
        expectTrue(try !matches("name LIKE '?'", ["name": .string("")]))
        let long = String(repeating: "a", count: 5_000)
        expectTrue(try !matches("name LIKE '" + String(repeating: "*a", count: 200) + "b'", ["name": .string(long)]))
    }

    @Test func matchesUsesICURegularExpressionsOnTheWholeString() throws {
        let v: [String: PropertyValue] = ["name": .string("ab12")]
        expectTrue(try matches("name MATCHES '[a-z]+\\\\d+'", v))
        expectTrue(try !matches("name MATCHES '[a-z]+'", v))
        expectTrue(try matches("name MATCHES 'a|ab12'", v))
        expectTrue(try matches("name MATCHES[c] 'AB12'", v))
        expectTrue(try !matches("name MATCHES 'AB12'", v))
        expectTrue(try matches("name MATCHES[d] 'ab12'", ["name": .string("áb12")]))
        expectTrue(try !matches("name MATCHES 'ab'", ["name": .string("ab\n")]))
    }

    @Test func matchesKeepsTheWholeStringAnchorsAfterACommentOrAnOpenQuote() throws {
        // A `(?x)` comment runs to the end of the line and `\Q` quotes to the end of the
        // pattern; neither may swallow the anchoring wrapper.
        let v: [String: PropertyValue] = ["name": .string("ab")]
        expectTrue(try matches("name MATCHES '(?x) a b  # letters'", v))
        expectTrue(try !matches("name MATCHES '(?x) a  # one letter'", v))
        expectTrue(try !matches("name MATCHES '(?x) b  # one letter'", v))
        expectTrue(try !matches("name MATCHES '(?x) a b  # letters'", ["name": .string("abc")]))
        expectTrue(try matches("name MATCHES '(?x) a | a b  # the longer alternative'", v))
        expectTrue(try matches("name MATCHES '(?x) a b  # a comment with ) and \\\\z'", v))
        expectTrue(try matches("name MATCHES '\\\\Qab'", v))
        expectTrue(try !matches("name MATCHES '\\\\Qa'", v))
        expectTrue(try matches("name MATCHES '\\\\Qa.'", ["name": .string("a.")]))
        expectTrue(try !matches("name MATCHES '\\\\Qa.'", v))
        expectTrue(try !matches("name MATCHES '\\\\Qa.'", ["name": .string("a.b")]))
        // Without x mode a `#` is an ordinary character.
        expectTrue(try matches("name MATCHES 'a#b'", ["name": .string("a#b")]))
        expectTrue(try !matches("name MATCHES 'a#b'", ["name": .string("a")]))
    }

    @Test func coercesConstantsToTheAttributeType() throws {
        expectTrue(try matches("lastSeen == '1970-01-01T00:16:40.000Z'", device))
        expectTrue(try matches("lastSeen > 999", device))
        expectTrue(try matches("lastSeen < $t", device, ["t": .string("1970-01-01T00:16:41Z")]))
        expectTrue(try matches("lastSeen == $t", device, ["t": .double(1_000)]))
        expectTrue(try matches("serial == 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'", device))
        expectTrue(try matches("serial == 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'", device))
        expectTrue(try matches("connected == YES AND connected == 1 AND connected != 0", device))
        expectTrue(try matches("connected > false", device))
        expectTrue(try matches("blob == 'AQID'", device))
        expectTrue(try matches("blob > 'AQI='", device))
        expectTrue(try matches("config == nil AND NOT config != nil", device))
        expectTrue(try matches("config != nil", ["config": .json(.object(["a": .int(1)]))]))
    }

    @Test func readsOneByteBinaryComparedWithNumbersAsAnUnsignedInteger() throws {
        let battery: [String: PropertyValue] = ["blob": .binary(Data([0x64]))]  // 2a19: 100 %
        expectTrue(try matches("blob == 100", battery))
        expectTrue(try matches("blob > 99 AND blob < 101 AND blob >= 100 AND blob <= 100.0", battery))
        expectTrue(try !matches("blob > 100", battery))
        expectTrue(try matches("blob != 99 AND NOT blob != 100", battery))
        expectTrue(try matches("blob BETWEEN {50, 100} AND blob IN {1, 100}", battery))
        expectTrue(try !matches("blob IN {1, 2}", battery))
        expectTrue(try matches("blob < 100.5 AND blob > 99.5", battery))
        expectTrue(try matches("150 > blob", battery))
        expectTrue(try matches("blob > -1", ["blob": .binary(Data([0xFF]))]), "unsigned: 0xFF is 255, not -1")
        expectTrue(try matches("blob == 255", ["blob": .binary(Data([0xFF]))]))
    }

    @Test func readsMultiByteBinaryAsLittleEndian() throws {
        let two: [String: PropertyValue] = ["blob": .binary(Data([0x34, 0x12]))]
        expectTrue(try matches("blob == 4660", two))  // 0x1234
        expectTrue(try !matches("blob == 13330", two))  // 0x3412, the big-endian reading
        expectTrue(try matches("blob == 305419896", ["blob": .binary(Data([0x78, 0x56, 0x34, 0x12]))]))
        expectTrue(try matches("blob == 1", ["blob": .binary(Data([1, 0, 0, 0]))]))
        let largestSigned: [String: PropertyValue] = [
            "blob": .binary(Data([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]))
        ]
        expectTrue(try matches("blob == 9223372036854775807", largestSigned))
        expectTrue(try matches("blob == 72057594037927936", ["blob": .binary(Data([0, 0, 0, 0, 0, 0, 0, 1]))]))
        // Above Int64.max: the nearest double, as a literal that large reads.
        let largest: [String: PropertyValue] = ["blob": .binary(Data(repeating: 0xFF, count: 8))]
        expectTrue(try matches("blob > 9223372036854775807", largest))
        expectTrue(try matches("blob == 18446744073709551615", largest))
        expectTrue(try matches("blob > 9223372036854775807", ["blob": .binary(Data([0, 0, 0, 0, 0, 0, 0, 0x80]))]))
    }

    @Test func readsEmptyLongAndMissingBinaryAsNilWhenComparedWithNumbers() throws {
        for bytes in [Data(), Data(repeating: 0, count: 9), Data(repeating: 1, count: 20)] {
            let v: [String: PropertyValue] = ["blob": .binary(bytes)]
            expectTrue(try !matches("blob == 0", v), "\(bytes.count) bytes")
            expectTrue(try !matches("blob > -1 OR blob < 1e300 OR blob >= 0 OR blob <= 0", v), "\(bytes.count) bytes")
            expectTrue(try !matches("blob BETWEEN {-1, 1e300}", v), "\(bytes.count) bytes")
            expectTrue(try !matches("blob IN {0, 1}", v), "\(bytes.count) bytes")
            expectTrue(try matches("blob != 5 AND NOT (blob > 0)", v), "\(bytes.count) bytes")
            expectTrue(try matches("blob IN {nil, 1}", v), "\(bytes.count) bytes: nil as a number")
            expectTrue(try !matches("blob == nil", v), "\(bytes.count) bytes are a value, not nil")
        }
        for v: [String: PropertyValue] in [[:], ["blob": .null]] {
            expectTrue(try !matches("blob > -1 OR blob == 0 OR blob IN {0}", v))
            expectTrue(try matches("blob != 5 AND blob == nil", v))
        }
    }

    @Test func readsBinaryAsANumberOnlyAgainstNumbers() throws {
        let v: [String: PropertyValue] = ["blob": .binary(Data([0x05, 0x01])), "rssi": .int(200)]
        expectTrue(try matches("blob == 261 AND blob > rssi AND rssi < blob", v))
        expectTrue(try matches("blob > $min", v, ["min": .int(5)]))
        expectTrue(try matches("blob > $min", v, ["min": .json(.int(260))]))
        expectTrue(try !matches("blob > $min", v, ["min": .json(.double(261))]))
        expectTrue(try matches("blob IN $set", v, ["set": .json(.array([.int(1), .int(261)]))]))
        // A string is base64 and compares bytes, lexicographically: 05 01 < 06.
        expectTrue(try matches("blob == 'BQE='", v))
        expectTrue(try matches("blob < 'Bg=='", v))
        expectTrue(try matches("blob > 'BQ=='", v))
        // Another binary attribute compares bytes too.
        expectTrue(try matches("blob == blob AND NOT blob != blob", v))
    }

    @Test func readsBinaryAsANumberThroughRelationships() throws {
        var graph = makeGraph()
        let d1 = PredicateTestFixtures.id("Device", 1)
        graph.objects[PredicateTestFixtures.id("Reading", 1)]?["payload"] = .binary(Data([0x10, 0x00]))
        graph.objects[PredicateTestFixtures.id("Reading", 2)]?["payload"] = .binary(Data([0x00, 0x10]))
        expectTrue(try graph.matches("ANY readings.payload == 16", d1))
        expectTrue(try graph.matches("ANY readings.payload == 4096", d1))
        expectTrue(try graph.matches("ALL readings.payload >= 16", d1))
        expectTrue(try !graph.matches("ALL readings.payload > 16", d1))
        expectTrue(try graph.matches("device.blob == 197121", PredicateTestFixtures.id("Reading", 1)))  // 01 02 03
        expectTrue(try !graph.matches("device.blob > 0", PredicateTestFixtures.id("Reading", 3)))
    }

    @Test func followsToOneKeyPathsAtAnyDepth() throws {
        let graph = makeGraph()
        let r1 = PredicateTestFixtures.id("Reading", 1)
        let r3 = PredicateTestFixtures.id("Reading", 3)
        expectTrue(try graph.matches("device.name == 'Thermometer'", r1))
        expectTrue(try graph.matches("device.rssi < 0 AND device.connected == true", r1))
        expectTrue(try graph.matches("device.name == nil", r3))
        expectTrue(try !graph.matches("device.name != nil", r3))
        expectTrue(try graph.matches("device == 'Device/1'", r1))
        expectTrue(try graph.matches("device == $d", r1, ["d": .reference(PredicateTestFixtures.id("Device", 1))]))
        expectTrue(try graph.matches("device != nil", r1))
        expectTrue(try graph.matches("device == nil", r3))
        expectTrue(try graph.matches("device.readings.@count == 2", r1))
        expectTrue(try !graph.matches("device.readings.@count == 0", r3))
        expectTrue(try graph.matches("ANY device.readings.label == 'a'", r1))
        expectTrue(try graph.matches("ALL device.readings.value > 100", r3))
    }

    @Test func quantifiesOverToManyRelationships() throws {
        let graph = makeGraph()
        let d1 = PredicateTestFixtures.id("Device", 1)
        let d2 = PredicateTestFixtures.id("Device", 2)
        expectTrue(try graph.matches("ANY readings.value > 5", d1))
        expectTrue(try graph.matches("readings.value > 5", d1))
        expectTrue(try !graph.matches("ALL readings.value > 5", d1))
        expectTrue(try graph.matches("ALL readings.value > 2", d1))
        expectTrue(try graph.matches("ALL readings.value > 100", d2))
        expectTrue(try !graph.matches("ANY readings.value > -100", d2))
        expectTrue(try graph.matches("NONE readings.value > 100", d1))
        expectTrue(try graph.matches("ANY readings.label == nil", d1))
        expectTrue(try graph.matches("5 < readings.value", d1))
        expectTrue(try graph.matches("ANY tags.title == 'kitchen'", d1))
        expectTrue(try graph.matches("ANY readings.device.tags.title BEGINSWITH 'kit'", d1))
        expectTrue(try graph.matches("readings CONTAINS 'Reading/2'", d1))
        expectTrue(try !graph.matches("readings CONTAINS 'Reading/3'", d1))
    }

    @Test func countsToManyRelationships() throws {
        let graph = makeGraph()
        expectTrue(try graph.matches("readings.@count == 2", PredicateTestFixtures.id("Device", 1)))
        expectTrue(try graph.matches("readings.@count == 0", PredicateTestFixtures.id("Device", 2)))
        expectTrue(try graph.matches("tags.@count BETWEEN {1, 1}", PredicateTestFixtures.id("Device", 1)))
        expectTrue(try matches("readings.@count == 0", [:]))
    }

    @Test func skipsRelatedObjectsThatAreGone() throws {
        var graph = makeGraph()
        graph.objects[PredicateTestFixtures.id("Reading", 2)] = nil
        graph.objects[PredicateTestFixtures.id("Device", 1)] = nil
        let values: [String: PropertyValue] = [
            "readings": .references([PredicateTestFixtures.id("Reading", 1), PredicateTestFixtures.id("Reading", 2)])
        ]
        let predicate = try ObjectPredicate(format: "ALL readings.value < 5")
        expectTrue(
            try predicate.evaluate(
                values: values, entity: "Device", in: PredicateTestFixtures.model, lookup: graph.lookup))
        expectTrue(try graph.matches("device.name == nil", PredicateTestFixtures.id("Reading", 1)))
    }

    @Test func evaluatesConstantsAndLogic() throws {
        expectTrue(try matches("TRUEPREDICATE", [:]))
        expectTrue(try !matches("FALSEPREDICATE", [:]))
        expectTrue(try matches("1 == 1 AND 'a' < 'b' AND nil == nil", [:]))
        expectTrue(try matches("rssi == 1 OR rssi == -60", device))
        expectTrue(try !matches("rssi == 1 || NOT rssi == -60", device))
        expectTrue(try matches("NOT (rssi == 1 AND rssi == -60)", device))
    }

    @Test func bindsVariablesAndRejectsUnboundOnes() throws {
        expectTrue(
            try matches("rssi == $r AND name BEGINSWITH $p", device, ["r": .int(-60), "p": .json(.string("Th"))]))
        #expect(throws: ObjectPredicateError.unboundVariable("r")) {
            try ObjectPredicate(format: "rssi == $r").binding([:])
        }
        #expect(throws: ObjectPredicateError.unboundVariable("r")) {
            try ObjectPredicate(format: "rssi == $r").evaluate(
                values: [:], entity: "Device", in: PredicateTestFixtures.model, lookup: { _ in nil })
        }
        #expect(throws: ObjectPredicateError.self) {
            try ObjectPredicate(format: "rssi IN $r").binding(["r": .json(.array([.array([])]))])
        }
    }

    @Test func preparedEvaluatorAgreesWithOneShotEvaluation() throws {
        let predicate = try ObjectPredicate(format: "name MATCHES[c] 'th.*' AND rssi < 0")
        let evaluator = try PredicateEvaluator(predicate, entity: "Device", in: PredicateTestFixtures.model)
        expectTrue(evaluator.evaluate(values: device, lookup: { _ in nil }))
        expectFalse(evaluator.evaluate(values: ["name": .string("x"), "rssi": .int(-1)], lookup: { _ in nil }))
    }
}
