import Foundation
import Shared
import Testing

@Suite struct PredicateEvaluatorTests {
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
        #expect(try matches("rssi == -60.0", device))
        #expect(try matches("rssi < -59.5", device))
        #expect(try !matches("rssi > -59.5", device))
        #expect(try matches("weight > 2", device))
        #expect(try matches("weight == 2.5 AND weight != 2", device))
        #expect(try matches("weight >= 2.5 AND weight <= 2.5", device))
        #expect(try matches("-61 < rssi", device))
        #expect(try matches("rssi == 9007199254740993", ["rssi": .int(9_007_199_254_740_993)]))
        #expect(try !matches("rssi == 9007199254740992.0", ["rssi": .int(9_007_199_254_740_993)]))
    }

    @Test func followsNSPredicateNilSemantics() throws {
        let none: [String: PropertyValue] = ["rssi": .int(1)]
        #expect(try matches("name == nil", none))
        #expect(try matches("name == nil", ["name": .null]))
        #expect(try !matches("name != nil", none))
        #expect(try matches("weight != 5", none))
        #expect(try !matches("weight == 5", none))
        #expect(try !matches("weight < 5", none))
        #expect(try !matches("weight >= 5", none))
        #expect(try matches("NOT (weight < 5)", none))
        #expect(try !matches("weight BETWEEN {0, 10}", none))
        #expect(try !matches("name BEGINSWITH 'a'", none))
        #expect(try matches("NOT name CONTAINS 'a'", none))
        #expect(try matches("weight IN {1, nil}", none))
        #expect(try !matches("weight IN {1, 2}", none))
        #expect(try !matches("rssi < nil", device))
        #expect(try matches("rssi != nil", device))
    }

    @Test func treatsNaNAsNil() throws {
        #expect(try matches("weight == nil", ["weight": .double(.nan)]))
        #expect(try !matches("weight > 0", ["weight": .double(.nan)]))
    }

    @Test func betweenIsInclusive() throws {
        #expect(try matches("rssi BETWEEN {-60, -50}", device))
        #expect(try matches("rssi BETWEEN {-70, -60}", device))
        #expect(try !matches("rssi BETWEEN {-59, -50}", device))
        #expect(try matches("rssi BETWEEN $r", device, ["r": .json(.array([.int(-61), .double(-59.5)]))]))
    }

    @Test func inAcceptsLiteralListsJSONArraysAndReferences() throws {
        #expect(try matches("rssi IN {1, -60}", device))
        #expect(try !matches("rssi IN {}", device))
        #expect(
            try matches("name IN $names", device, ["names": .json(.array([.string("x"), .string("Thermometer")]))]))
        #expect(try !matches("name IN $names", device, ["names": .json(.array([]))]))
        let graph = makeGraph()
        let r1 = PredicateTestFixtures.id("Reading", 1)
        #expect(try graph.matches("device IN $ds", r1, ["ds": .references([PredicateTestFixtures.id("Device", 1)])]))
        #expect(try !graph.matches("device IN $ds", r1, ["ds": .references([PredicateTestFixtures.id("Device", 2)])]))
        #expect(try matches("name IN[c] {'THERMOMETER'}", device))
    }

    @Test func stringOperatorsHonourCaseAndDiacriticOptions() throws {
        let v: [String: PropertyValue] = ["name": .string("Crème Brûlée")]
        #expect(try matches("name BEGINSWITH 'Crème'", v))
        #expect(try !matches("name BEGINSWITH 'creme'", v))
        #expect(try !matches("name BEGINSWITH[c] 'creme'", v))
        #expect(try !matches("name BEGINSWITH[d] 'creme'", v))
        #expect(try matches("name BEGINSWITH[cd] 'creme'", v))
        #expect(try matches("name ENDSWITH[d] 'Brulee'", v))
        #expect(try matches("name CONTAINS[c] 'ME BR'", v))
        #expect(try !matches("name CONTAINS 'ME BR'", v))
        #expect(try matches("name ==[cd] 'CREME BRULEE'", v))
        #expect(try !matches("name == 'CREME BRULEE'", v))
        #expect(try matches("name !=[c] 'x'", v))
        #expect(try !matches("name CONTAINS ''", v))
        #expect(try matches("name ==[c] 'STRASSE'", ["name": .string("straße")]))
        #expect(try !matches("name == 'STRASSE'", ["name": .string("straße")]))
        #expect(try !matches("name BEGINSWITH ''", v))
    }

    @Test func comparesStringsByUnicodeScalarsNotCanonicalEquivalence() throws {
        let decomposed: [String: PropertyValue] = ["name": .string("e\u{301}")]
        #expect(try !matches("name == '\u{e9}'", decomposed))
        #expect(try matches("name ==[d] 'e'", decomposed))
        #expect(try matches("name < 'f'", decomposed))
        #expect(try matches("name > 'Z'", ["name": .string("a")]))
    }

    @Test func likeMatchesWildcardsOverTheWholeString() throws {
        let v: [String: PropertyValue] = ["name": .string("a*bc")]
        #expect(try matches("name LIKE 'a*'", v))
        #expect(try matches("name LIKE '?*?c'", v))
        #expect(try matches("name LIKE 'a\\\\*bc'", v))
        #expect(try !matches("name LIKE 'a\\\\*c'", v))
        #expect(try !matches("name LIKE 'a'", v))
        #expect(try matches("name LIKE[c] 'A*BC'", v))
        #expect(try matches("name LIKE '*'", ["name": .string("")]))
        #expect(try !matches("name LIKE '?'", ["name": .string("")]))
        let long = String(repeating: "a", count: 5_000)
        #expect(try !matches("name LIKE '" + String(repeating: "*a", count: 200) + "b'", ["name": .string(long)]))
    }

    @Test func matchesUsesICURegularExpressionsOnTheWholeString() throws {
        let v: [String: PropertyValue] = ["name": .string("ab12")]
        #expect(try matches("name MATCHES '[a-z]+\\\\d+'", v))
        #expect(try !matches("name MATCHES '[a-z]+'", v))
        #expect(try matches("name MATCHES 'a|ab12'", v))
        #expect(try matches("name MATCHES[c] 'AB12'", v))
        #expect(try !matches("name MATCHES 'AB12'", v))
        #expect(try matches("name MATCHES[d] 'ab12'", ["name": .string("áb12")]))
        #expect(try !matches("name MATCHES 'ab'", ["name": .string("ab\n")]))
    }

    @Test func coercesConstantsToTheAttributeType() throws {
        #expect(try matches("lastSeen == '1970-01-01T00:16:40.000Z'", device))
        #expect(try matches("lastSeen > 999", device))
        #expect(try matches("lastSeen < $t", device, ["t": .string("1970-01-01T00:16:41Z")]))
        #expect(try matches("lastSeen == $t", device, ["t": .double(1_000)]))
        #expect(try matches("serial == 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'", device))
        #expect(try matches("serial == 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'", device))
        #expect(try matches("connected == YES AND connected == 1 AND connected != 0", device))
        #expect(try matches("connected > false", device))
        #expect(try matches("blob == 'AQID'", device))
        #expect(try matches("blob > 'AQI='", device))
        #expect(try matches("config == nil AND NOT config != nil", device))
        #expect(try matches("config != nil", ["config": .json(.object(["a": .int(1)]))]))
    }

    @Test func followsToOneKeyPathsAtAnyDepth() throws {
        let graph = makeGraph()
        let r1 = PredicateTestFixtures.id("Reading", 1)
        let r3 = PredicateTestFixtures.id("Reading", 3)
        #expect(try graph.matches("device.name == 'Thermometer'", r1))
        #expect(try graph.matches("device.rssi < 0 AND device.connected == true", r1))
        #expect(try graph.matches("device.name == nil", r3))
        #expect(try !graph.matches("device.name != nil", r3))
        #expect(try graph.matches("device == 'Device/1'", r1))
        #expect(try graph.matches("device == $d", r1, ["d": .reference(PredicateTestFixtures.id("Device", 1))]))
        #expect(try graph.matches("device != nil", r1))
        #expect(try graph.matches("device == nil", r3))
        #expect(try graph.matches("device.readings.@count == 2", r1))
        #expect(try !graph.matches("device.readings.@count == 0", r3))
        #expect(try graph.matches("ANY device.readings.label == 'a'", r1))
        #expect(try graph.matches("ALL device.readings.value > 100", r3))
    }

    @Test func quantifiesOverToManyRelationships() throws {
        let graph = makeGraph()
        let d1 = PredicateTestFixtures.id("Device", 1)
        let d2 = PredicateTestFixtures.id("Device", 2)
        #expect(try graph.matches("ANY readings.value > 5", d1))
        #expect(try graph.matches("readings.value > 5", d1))
        #expect(try !graph.matches("ALL readings.value > 5", d1))
        #expect(try graph.matches("ALL readings.value > 2", d1))
        #expect(try graph.matches("ALL readings.value > 100", d2))
        #expect(try !graph.matches("ANY readings.value > -100", d2))
        #expect(try graph.matches("NONE readings.value > 100", d1))
        #expect(try graph.matches("ANY readings.label == nil", d1))
        #expect(try graph.matches("5 < readings.value", d1))
        #expect(try graph.matches("ANY tags.title == 'kitchen'", d1))
        #expect(try graph.matches("ANY readings.device.tags.title BEGINSWITH 'kit'", d1))
        #expect(try graph.matches("readings CONTAINS 'Reading/2'", d1))
        #expect(try !graph.matches("readings CONTAINS 'Reading/3'", d1))
    }

    @Test func countsToManyRelationships() throws {
        let graph = makeGraph()
        #expect(try graph.matches("readings.@count == 2", PredicateTestFixtures.id("Device", 1)))
        #expect(try graph.matches("readings.@count == 0", PredicateTestFixtures.id("Device", 2)))
        #expect(try graph.matches("tags.@count BETWEEN {1, 1}", PredicateTestFixtures.id("Device", 1)))
        #expect(try matches("readings.@count == 0", [:]))
    }

    @Test func skipsRelatedObjectsThatAreGone() throws {
        var graph = makeGraph()
        graph.objects[PredicateTestFixtures.id("Reading", 2)] = nil
        graph.objects[PredicateTestFixtures.id("Device", 1)] = nil
        let values: [String: PropertyValue] = [
            "readings": .references([PredicateTestFixtures.id("Reading", 1), PredicateTestFixtures.id("Reading", 2)])
        ]
        let predicate = try ObjectPredicate(format: "ALL readings.value < 5")
        #expect(
            try predicate.evaluate(
                values: values, entity: "Device", in: PredicateTestFixtures.model, lookup: graph.lookup))
        #expect(try graph.matches("device.name == nil", PredicateTestFixtures.id("Reading", 1)))
    }

    @Test func evaluatesConstantsAndLogic() throws {
        #expect(try matches("TRUEPREDICATE", [:]))
        #expect(try !matches("FALSEPREDICATE", [:]))
        #expect(try matches("1 == 1 AND 'a' < 'b' AND nil == nil", [:]))
        #expect(try matches("rssi == 1 OR rssi == -60", device))
        #expect(try !matches("rssi == 1 || NOT rssi == -60", device))
        #expect(try matches("NOT (rssi == 1 AND rssi == -60)", device))
    }

    @Test func bindsVariablesAndRejectsUnboundOnes() throws {
        #expect(try matches("rssi == $r AND name BEGINSWITH $p", device, ["r": .int(-60), "p": .json(.string("Th"))]))
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
        #expect(evaluator.evaluate(values: device, lookup: { _ in nil }))
        #expect(!evaluator.evaluate(values: ["name": .string("x"), "rssi": .int(-1)], lookup: { _ in nil }))
    }
}
