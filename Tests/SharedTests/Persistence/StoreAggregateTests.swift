import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// Aggregates (`AggregateRequest`, docs/protocol.md "store.aggregate") against every store, and the SQLite store's
/// SQL against the in-memory evaluator on random data.
struct StoreAggregateTests {
    private static let hour: Double = 3600

    /// Two devices; device 1 has readings at 10:10, 10:50 and 11:20 with numbers 1, 2, 4; device 2 one at 10:05
    /// with no number; one reading belongs to no device.
    private func readings(_ factory: StoreFactory) throws -> (store: TestStore, devices: [ObjectID]) {
        let model = try Model(
            entities: [
                EntityDescription(
                    name: "Device", attributes: [AttributeDescription("address", .string)],
                    relationships: [
                        RelationshipDescription("readings", destination: "Reading", toMany: true, inverse: "device")
                    ]),
                EntityDescription(
                    name: "Reading",
                    attributes: [
                        AttributeDescription("kind", .string), AttributeDescription("time", .date),
                        AttributeDescription("number", .double, optional: true),
                        AttributeDescription("count", .int, default: .int(1)),
                    ],
                    relationships: [RelationshipDescription("device", destination: "Device", inverse: "readings")]),
            ])
        let store = try factory.make(model)
        let one = try store.insert("Device", ["address": .string("A")])
        let two = try store.insert("Device", ["address": .string("B")])
        func reading(_ device: ObjectID?, _ minutes: Double, _ number: Double?, kind: String = "t") throws {
            var values: [String: PropertyValue] = [
                "kind": .string(kind), "time": .date(Date(timeIntervalSince1970: 10 * Self.hour + minutes * 60)),
                "number": number.map(PropertyValue.double) ?? .null,
            ]
            if let device { values["device"] = .reference(device) }
            try store.insert("Reading", values)
        }
        try reading(one, 10, 1)
        try reading(one, 50, 2)
        try reading(one, 80, 4, kind: "h")
        try reading(two, 5, nil)
        try reading(nil, 30, 8)
        return (store, [one, two])
    }

    private func at(_ hours: Double) -> PropertyValue { .date(Date(timeIntervalSince1970: hours * Self.hour)) }

    @Test(arguments: StoreFactory.all)
    func groupsByAKeyAndADateBucketInOrderNullFirst(factory: StoreFactory) throws {
        let (store, devices) = try readings(factory)
        let result = try store.aggregate(
            AggregateRequest(
                entity: "Reading", groupBy: ["device"], bucket: .init(key: "time", seconds: 3600),
                values: [
                    "n": .count, "numbers": .countOf("number"), "mean": .average("number"), "last": .maximum("time"),
                ]))
        expectEqual(result.txn, store.lastTransaction)
        expectEqual(
            result.groups.map(\.key),
            [
                ["device": .null, "time": at(10)], ["device": .reference(devices[0]), "time": at(10)],
                ["device": .reference(devices[0]), "time": at(11)], ["device": .reference(devices[1]), "time": at(10)],
            ])
        expectEqual(result.groups.map { $0.values["n"] }, [.int(1), .int(2), .int(1), .int(1)])
        expectEqual(result.groups.map { $0.values["numbers"] }, [.int(1), .int(2), .int(1), .int(0)])
        expectEqual(result.groups.map { $0.values["mean"] }, [.double(8), .double(1.5), .double(4), .null])
        expectEqual(result.groups[1].values["last"], .date(Date(timeIntervalSince1970: 10 * Self.hour + 50 * 60)))
    }

    @Test(arguments: StoreFactory.all)
    func withoutGroupsThereIsExactlyOneGroupEvenWhenNothingMatches(factory: StoreFactory) throws {
        let (store, _) = try readings(factory)
        let all = try store.aggregate(
            AggregateRequest(entity: "Reading", values: ["n": .count, "total": .sum("count"), "low": .minimum("kind")]))
        expectEqual(all.groups, [.init(key: [:], values: ["n": .int(5), "total": .int(5), "low": .string("h")])])
        let none = try store.aggregate(
            AggregateRequest(
                entity: "Reading", where: try ObjectPredicate(format: "kind == 'nothing'"),
                values: ["n": .count, "total": .sum("count"), "mean": .average("number")]))
        expectEqual(none.groups, [.init(key: [:], values: ["n": .int(0), "total": .null, "mean": .null])])
    }

    @Test(arguments: StoreFactory.all)
    func aPredicateAndArgumentsSelectTheObjects(factory: StoreFactory) throws {
        let (store, _) = try readings(factory)
        let result = try store.aggregate(
            AggregateRequest(
                entity: "Reading", where: try ObjectPredicate(format: "number >= $min"), arguments: ["min": .int(2)],
                groupBy: ["kind"], values: ["sum": .sum("number")]))
        expectEqual(
            result.groups,
            [
                .init(key: ["kind": .string("h")], values: ["sum": .double(4)]),
                .init(key: ["kind": .string("t")], values: ["sum": .double(10)]),
            ])
    }

    /// PROTOCOL.md, "Aggregates": `sum` and `avg` over date attributes too; `avg` is a double (the mean's seconds since
    /// the Unix epoch), `sum` keeps the attribute's type (the date whose seconds since the epoch are the sum of theirs).
    @Test(arguments: StoreFactory.all)
    func sumsAndAveragesOfADateAreItsSecondsSinceTheEpoch(factory: StoreFactory) throws {
        let (store, devices) = try readings(factory)
        let result = try store.aggregate(
            AggregateRequest(
                entity: "Reading", where: try ObjectPredicate(format: "device == $d"),
                arguments: ["d": .reference(devices[0])], values: ["total": .sum("time"), "mean": .average("time")]))
        // 10:10, 10:50 and 11:20 on 1970-01-01.
        let seconds = [10 * Self.hour + 600, 10 * Self.hour + 3000, 11 * Self.hour + 1200]
        expectEqual(
            result.groups,
            [
                .init(
                    key: [:],
                    values: [
                        "total": .date(Date(timeIntervalSince1970: seconds.reduce(0, +))),
                        "mean": .double(seconds.reduce(0, +) / 3),
                    ])
            ])
        let none = try store.aggregate(
            AggregateRequest(
                entity: "Reading", where: try ObjectPredicate(format: "kind == 'nothing'"),
                values: ["total": .sum("time"), "mean": .average("time")]))
        expectEqual(none.groups, [.init(key: [:], values: ["total": .null, "mean": .null])])
    }

    @Test(
        arguments: [
            (AggregateRequest(entity: "Nope", values: ["n": .count]), "entity"),
            (AggregateRequest(entity: "Reading", groupBy: ["colour"], values: ["n": .count]), "groupBy[0]"),
            (
                AggregateRequest(entity: "Reading", bucket: .init(key: "kind", seconds: 60), values: ["n": .count]),
                "bucket.key"
            ),
            (
                AggregateRequest(entity: "Reading", bucket: .init(key: "time", seconds: 0), values: ["n": .count]),
                "bucket.seconds"
            ),
            (AggregateRequest(entity: "Reading", values: ["m": .average("kind")]), "values.m"),
            (AggregateRequest(entity: "Reading", values: ["m": .sum("kind")]), "values.m"),
            (AggregateRequest(entity: "Reading", values: ["m": .maximum("nothing")]), "values.m"),
            (AggregateRequest(entity: "Reading", values: [:]), "values"),
        ], StoreFactory.all)
    func aRequestThatDoesNotFitTheModelNamesTheField(
        _ wrong: (request: AggregateRequest, field: String), factory: StoreFactory
    ) throws {
        let (request, field) = wrong
        let (store, _) = try readings(factory)
        guard case .invalidRequest(let actual, _)? = storeError({ _ = try store.aggregate(request) }) else {
            Issue.record("expected an invalid request")
            return
        }
        expectEqual(actual, field)
    }

    /// SQLite's SQL and the in-memory evaluator give the same groups on random data (doubles to within rounding:
    /// the sums may add in another order; date sums too).
    @Test func sqlAgreesWithTheInMemoryEvaluatorOnRandomData() throws {
        var random = SeededRandom(seed: 0xA66)
        for round in 0..<8 {
            let (store, devices) = try readings(.sqlite)
            for _ in 0..<60 {
                var values: [String: PropertyValue] = [
                    "kind": .string(["a", "b", "é", "B"].randomElement(using: &random)!),
                    "time": .date(Date(timeIntervalSince1970: Double(random.int(200_000)) - 50_000 + 0.25)),
                    "count": .int(Int64(random.int(9)) - 4),
                ]
                if random.coin() { values["number"] = .double(Double(random.int(1000)) / 7) }
                if random.int(3) > 0 { values["device"] = .reference(devices[random.int(2)]) }
                try store.insert("Reading", values)
            }
            let requests = [
                AggregateRequest(
                    entity: "Reading", groupBy: ["kind", "device"], bucket: .init(key: "time", seconds: 7_200),
                    values: [
                        "n": .count, "s": .sum("count"), "a": .average("number"), "lo": .minimum("time"),
                        "hi": .maximum("kind"),
                    ]),
                AggregateRequest(
                    entity: "Reading", where: try ObjectPredicate(format: "count > 0 OR number == nil"),
                    groupBy: ["device"],
                    values: [
                        "n": .countOf("number"), "s": .sum("number"), "lo": .minimum("count"), "ts": .sum("time"),
                        "ta": .average("time"),
                    ]),
                AggregateRequest(entity: "Reading", bucket: .init(key: "time", seconds: 86_400), values: ["n": .count]),
            ]
            for request in requests {
                let sql = try store.aggregate(request)
                guard
                    case .objects(let snapshots) = try store.fetch(
                        FetchRequest(entity: request.entity, predicate: request.predicate, arguments: request.arguments)
                    ).content
                else { continue }
                let memory = AggregateEvaluator(try CheckedAggregate(request, model: store.model)).groups(of: snapshots)
                expectEqual(sql.groups.map(\.key), memory.map(\.key), "round \(round): \(request)")
                for (a, b) in zip(sql.groups, memory) {
                    for (name, value) in a.values {
                        if case .double(let x) = value, case .double(let y)? = b.values[name] {
                            expectTrue(abs(x - y) <= 1e-9 * max(1, abs(y)), "round \(round): \(name) \(x) vs \(y)")
                        } else if case .date(let x) = value, case .date(let y)? = b.values[name] {
                            let (a, b) = (x.timeIntervalSince1970, y.timeIntervalSince1970)
                            expectTrue(abs(a - b) <= 1e-9 * max(1, abs(b)), "round \(round): \(name) \(a) vs \(b)")
                        } else {
                            expectEqual(value, b.values[name], "round \(round): \(name)")
                        }
                    }
                }
            }
        }
    }
}
