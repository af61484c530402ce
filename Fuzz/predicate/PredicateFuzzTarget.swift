import Foundation
import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusSupport

// Fuzz target `predicate`: `ObjectPredicate(format:)` on arbitrary text, then everything a store
// does with a predicate, against the default model (`Model.deviceReadings`).
//
// Properties:
// - parsing never crashes; a syntax error's position lies within the text;
// - `predicateFormat` parses back to an equal predicate;
// - `validate`, `binding` (every `$variable` bound to a value picked by the input),
//   `PredicateEvaluator` and `PredicateSQLCompiler.compile` never crash, for both entities;
// - the evaluator and the compiler accept and reject the same bound predicates (the compiler
//   may also refuse SQL nested past its budget, with `nestingTooDeep`);
// - the compiled SQL runs in SQLite (with the `cb_*` functions registered) over a small object
//   graph and selects exactly the objects the in-memory evaluator matches.
//
// The database is `PredicateTestDatabase` from the Shared tests, compiled into this harness.

typealias ObjectPredicate = ContextBusObjectGraph.ObjectPredicate
typealias PredicateOperand = ContextBusObjectGraph.PredicateOperand
typealias ObjectPredicateError = ContextBusObjectGraph.ObjectPredicateError

private let model = Model.deviceReadings

private func id(_ entity: String, _ number: Int64) -> ObjectID { ObjectID(entity: entity, number: number) }
private func date(_ seconds: Double) -> PropertyValue { .date(Date(timeIntervalSince1970: seconds)) }

/// A few devices and readings covering nil, empty and non-ASCII values and a broken to-one.
private let objects: [ObjectID: [String: PropertyValue]] = [
    id("Device", 1): [
        "address": .string("AA:BB:CC:DD:EE:01"), "name": .string("Thermo"), "connected": .bool(true),
        "lastSeen": date(1_700_000_000.25), "readings": .references([id("Reading", 1), id("Reading", 2)]),
    ],
    id("Device", 2): [
        "address": .string("aa:bb:cc:dd:ee:02"), "name": .null, "connected": .bool(false), "lastSeen": .null,
        "readings": .references([id("Reading", 3)]),
    ],
    id("Device", 3): [
        "address": .string(""), "name": .string("Straße e\u{301}"), "connected": .bool(false),
        "lastSeen": date(-1.5), "readings": .references([]),
    ],
    id("Reading", 1): [
        "characteristic": .string("2a19"), "value": .binary(Data([0x64])), "time": date(1_700_000_001),
        "chain": .string("c-1"), "device": .reference(id("Device", 1)),
    ],
    id("Reading", 2): [
        "characteristic": .string("2A37"), "value": .binary(Data()), "time": date(1_700_000_002), "chain": .null,
        "device": .reference(id("Device", 1)),
    ],
    id("Reading", 3): [
        "characteristic": .string("0000180f-0000-1000-8000-00805f9b34fb"), "value": .binary(Data([0, 0xFF])),
        "time": date(0), "chain": .string("c-*?"), "device": .reference(id("Device", 2)),
    ],
    id("Reading", 4): [
        "characteristic": .string("é"), "value": .binary(Data([1])), "time": date(1e9), "chain": .string(""),
        "device": .null,
    ],
]

/// Values a `$variable` may be bound to (the input picks one per variable).
private let argumentChoices: [PropertyValue] = [
    .string("Thermo"), .string("2a19"), .string(""), .string("AA:BB:CC:DD:EE:01"), .string("Device/1"),
    .string("2023-11-14T22:13:20Z"), .string("ZA=="), .int(0), .int(1), .int(-1), .int(Int64.max),
    .double(0.5), .double(-0.0), .double(.infinity), .double(.nan), .bool(true), .bool(false), .null,
    date(1_700_000_000.25), .binary(Data([0x64])), .uuid(UUID(uuidString: "0000180F-0000-1000-8000-00805F9B34FB")!),
    .reference(id("Device", 1)), .reference(id("Reading", 3)), .references([id("Reading", 1), id("Reading", 4)]),
    .json(.array([.string("c-1"), .int(3), .null])), .json(.array([.array([])])), .json(.object(["a": .int(1)])),
    .json(.string("c-1")), .json(.double(2.5)),
]

nonisolated(unsafe) private let database: PredicateTestDatabase = {
    do {
        let database = try PredicateTestDatabase(model: model)
        for (id, values) in objects { try database.insert(id, values) }
        return database
    } catch {
        fatalError("cannot set up the fuzz database: \(error)")
    }
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func predicateFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let predicate: ObjectPredicate
    do {
        predicate = try ObjectPredicate(format: text)
    } catch {
        let scalars = text.unicodeScalars.count
        fuzzCheck(error.position >= 0 && error.position <= scalars, "position \(error.position) of \(scalars)")
        return 0
    }

    let format = predicate.predicateFormat
    do {
        let again = try ObjectPredicate(format: format)
        fuzzCheck(again == predicate, "'\(format)' reads back as \(again), not \(predicate)")
    } catch {
        fuzzCheck(false, "predicateFormat '\(format)' does not parse: \(error)")
    }

    var random = FuzzRandom(hashing: bytes)
    var arguments: [String: PropertyValue] = [:]
    for name in variables(of: predicate).sorted() where random.below(8) != 0 {
        arguments[name] = argumentChoices[random.below(argumentChoices.count)]
    }
    for entity in ["Device", "Reading"] {
        _ = try? predicate.validate(for: entity, in: model)
        // Unbound, the evaluator and the compiler must both refuse it the same way.
        checkAgreement((try? predicate.binding(arguments)) ?? predicate, entity: entity)
    }
    return 0
}

/// The evaluator and the compiled SQL accept the same predicates and match the same objects.
private func checkAgreement(_ predicate: ObjectPredicate, entity: String) {
    let evaluator = Result { () throws(ObjectPredicateError) in
        try PredicateEvaluator(predicate, entity: entity, in: model)
    }
    let fragment = Result { () throws(ObjectPredicateError) in
        try PredicateSQLCompiler.compile(predicate, entity: entity, schema: database.schema, alias: "t")
    }
    switch (evaluator, fragment) {
    case (.failure(let error), .failure(let compileError)):
        fuzzCheck(error == compileError, "the evaluator says \(error), the compiler \(compileError)")
    case (.failure(let error), .success):
        fuzzCheck(false, "the evaluator refuses (\(error)) what the compiler accepts: \(predicate)")
    case (.success, .failure(let error)):
        fuzzCheck(
            error == .nestingTooDeep(limit: ObjectPredicate.maximumNestingDepth), "only the compiler refuses: \(error)")
    case (.success(let evaluator), .success(let fragment)):
        var matched: Set<Int64> = []
        for (id, values) in objects where id.entity == entity {
            if evaluator.evaluate(values: values, lookup: { objects[$0] }) { matched.insert(id.number!) }
        }
        do {
            let selected = try database.select(entity, where: fragment)
            fuzzCheck(
                selected == matched,
                "\(entity) where \(predicate.predicateFormat): SQL selects \(selected.sorted()), "
                    + "memory matches \(matched.sorted()); SQL: \(fragment.sql) \(fragment.bindings)")
        } catch {
            fuzzCheck(false, "compiled SQL fails: \(error)")
        }
    }
}

/// The names of the predicate's `$variables`.
private func variables(of predicate: ObjectPredicate) -> Set<String> {
    switch predicate {
    case .constant: return []
    case .not(let inner): return variables(of: inner)
    case .and(let items), .or(let items): return items.reduce(into: []) { $0.formUnion(variables(of: $1)) }
    case .comparison(let c): return variables(of: c.lhs).union(variables(of: c.rhs))
    }
}

private func variables(of expression: PredicateOperand) -> Set<String> {
    switch expression {
    case .keyPath, .count, .literal: return []
    case .variable(let name): return [name]
    case .list(let items): return items.reduce(into: []) { $0.formUnion(variables(of: $1)) }
    }
}
