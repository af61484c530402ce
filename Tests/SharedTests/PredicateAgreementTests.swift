import Foundation
import Shared
import Testing

/// Property: for random model-conforming objects stored in a real SQLite database and random
/// predicates, in-memory evaluation selects exactly the IDs that the compiled SQL selects.
@Suite struct PredicateAgreementTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 1_234_567, 0xDEAD_BEEF, 77, 2026]
    static let predicatesPerEntity = 120

    @Test(arguments: seeds)
    func memoryAndSQLSelectTheSameObjects(seed: UInt64) throws {
        var generator = RandomGraphGenerator(seed: seed)
        let graph = generator.makeGraph()
        let model = PredicateTestFixtures.model
        let db = try PredicateTestDatabase(model: model)
        for (id, values) in graph.objects.sorted(by: { $0.key < $1.key }) { try db.insert(id, values) }

        var checked = 0
        var discriminating = 0
        for entity in ["Device", "Reading", "Tag"] {
            let ids = graph.objects.keys.filter { $0.entity == entity }
            for _ in 0..<Self.predicatesPerEntity {
                let (template, arguments) = generator.makePredicate(for: entity, depth: 3)
                let predicate = try template.binding(arguments)
                let context = Comment(
                    rawValue: "seed \(seed): \(template.predicateFormat) with \(arguments)")
                let evaluator = try PredicateEvaluator(predicate, entity: entity, in: model)
                let memory = Set(
                    ids.filter { evaluator.evaluate(values: graph.objects[$0]!, lookup: graph.lookup) }.map {
                        $0.number!
                    })
                let fragment = try PredicateSQLCompiler.compile(
                    predicate, entity: entity, schema: db.schema, alias: "t")
                let sql = try db.select(entity, where: fragment)
                #expect(memory == sql, "\(context) — SQL: \(fragment.sql) \(fragment.bindings)")

                // The format string reads back to a predicate with the same answers.
                let reparsed = try PredicateEvaluator(
                    ObjectPredicate(format: template.predicateFormat).binding(arguments), entity: entity, in: model)
                let again = Set(
                    ids.filter { reparsed.evaluate(values: graph.objects[$0]!, lookup: graph.lookup) }.map {
                        $0.number!
                    })
                #expect(again == memory, context)
                checked += 1
                if !memory.isEmpty && memory.count < ids.count { discriminating += 1 }
            }
        }
        #expect(checked == 3 * Self.predicatesPerEntity)
        // The generator must produce predicates that split the objects, or agreement proves little.
        #expect(
            discriminating * 3 > checked,
            "seed \(seed): only \(discriminating) of \(checked) predicates split the objects")
    }
}

/// SplitMix64: small, seedable, the same on every platform.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random objects of `PredicateTestFixtures.model` with consistent inverses, and random
/// well-typed predicates over them (constants sometimes passed as `$variables`).
struct RandomGraphGenerator {
    private var rng: SplitMix64
    private var variableCount = 0

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    private mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    private mutating func pick<T>(_ items: [T]) -> T { items[Int.random(in: 0..<items.count, using: &rng)] }

    static let strings = [
        "alpha", "Alpha", "ÀLPHA", "älpha", "beta", "", "a*b", "a?c", "straße", "STRASSE", "e\u{301}", "\u{e9}",
        "😀x", "Thermo", "thermometer", "z", "a\\b", "Ab", "ab",
    ]
    static let patterns = ["a*", "*a", "?lpha", "*", "a\\*b", "*ß*", "?", "", "*e*", "th*r"]
    static let regexes = ["a.*", "[a-z]+", ".*ß.*", "(?i)beta", "a|alpha", "\\w*", ".", "e\u{301}", ""]
    static let ints: [Int64] = [-3, -1, 0, 1, 2, 5, 100, .max, .min, 9_007_199_254_740_993]
    static let doubles: [Double] = [-2.5, -1, 0, 0.5, 1, 2, 2.5, 5, 1e300, 9_007_199_254_740_992, -0.0, 100]
    static let seconds: [Double] = [0, 10, 10.5, 1_000, -5, 1.7e9]
    static let uuids = [
        UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        UUID(uuidString: "00000000-0000-0000-0000-000000000001")!,
        UUID(uuidString: "FFFFFFFF-0000-0000-0000-000000000000")!,
    ]
    static let blobs = [Data(), Data([0]), Data([1, 2, 3]), Data([1, 2]), Data([255])]
    static let counts: [String: Int64] = ["Device": 8, "Reading": 20, "Tag": 4]

    // MARK: - Objects

    mutating func makeGraph() -> ObjectGraphFixture {
        var graph = ObjectGraphFixture()
        func id(_ e: String, _ n: Int64) -> ObjectID { ObjectID(entity: e, number: n) }
        var readingsOf: [Int64: [ObjectID]] = [:]
        var devicesOf: [Int64: [ObjectID]] = [:]
        var tagsOf: [Int64: [ObjectID]] = [:]
        for n in 1...Self.counts["Reading"]! {
            var v: [String: PropertyValue] = [
                "value": chance(0.2) ? .null : .double(pick(Self.doubles)),
                "count": chance(0.2) ? .null : .int(pick(Self.ints)),
                "label": chance(0.2) ? .null : .string(pick(Self.strings)),
                "time": .date(Date(timeIntervalSince1970: pick(Self.seconds))),
            ]
            if chance(0.8) {
                let d = Int64.random(in: 1...Self.counts["Device"]!, using: &rng)
                v["device"] = .reference(id("Device", d))
                readingsOf[d, default: []].append(id("Reading", n))
            } else {
                v["device"] = .null
            }
            graph.objects[id("Reading", n)] = v
        }
        for d in 1...Self.counts["Device"]! {
            for t in 1...Self.counts["Tag"]! where chance(0.35) {
                tagsOf[d, default: []].append(id("Tag", t))
                devicesOf[t, default: []].append(id("Device", d))
            }
        }
        for n in 1...Self.counts["Device"]! {
            graph.objects[id("Device", n)] = [
                "name": chance(0.2) ? .null : .string(pick(Self.strings)),
                "address": .string(pick(Self.strings)),
                "rssi": .int(pick(Self.ints)),
                "weight": chance(0.2) ? .null : .double(pick(Self.doubles)),
                "connected": .bool(chance(0.5)),
                "lastSeen": chance(0.2) ? .null : .date(Date(timeIntervalSince1970: pick(Self.seconds))),
                "serial": chance(0.3) ? .null : .uuid(pick(Self.uuids)),
                "blob": chance(0.3) ? .null : .binary(pick(Self.blobs)),
                "config": chance(0.5) ? .null : .json(.object(["n": .int(n)])),
                "readings": .references(readingsOf[n] ?? []),
                "tags": .references(tagsOf[n] ?? []),
            ]
        }
        for t in 1...Self.counts["Tag"]! {
            graph.objects[id("Tag", t)] = [
                "title": .string(pick(Self.strings)), "devices": .references(devicesOf[t] ?? []),
            ]
        }
        return graph
    }

    // MARK: - Key paths

    /// What a key path yields, for choosing operators and constants.
    enum Kind: Equatable {
        case attribute(AttributeType)
        case object(String)
        case count
    }

    struct KeyPath {
        var keys: [String]
        var isCount: Bool
        var kind: Kind
        var isCollection: Bool
        var expression: PredicateOperand { isCount ? .count(keys) : .keyPath(keys) }
    }

    /// Every key path from `entity` through at most two relationships.
    static func keyPaths(
        from entity: String, depth: Int = 2, prefix: [String] = [], collection: Bool = false
    )
        -> [KeyPath]
    {
        let description = PredicateTestFixtures.model.entity(named: entity)!
        var result: [KeyPath] = []
        for a in description.attributes {
            result.append(
                KeyPath(keys: prefix + [a.name], isCount: false, kind: .attribute(a.type), isCollection: collection))
        }
        for r in description.relationships {
            let keys = prefix + [r.name]
            if r.isToMany {
                result.append(KeyPath(keys: keys, isCount: true, kind: .count, isCollection: collection))
                result.append(KeyPath(keys: keys, isCount: false, kind: .object(r.destination), isCollection: true))
            } else {
                result.append(
                    KeyPath(keys: keys, isCount: false, kind: .object(r.destination), isCollection: collection))
            }
            if depth > 0 {
                result += keyPaths(
                    from: r.destination, depth: depth - 1, prefix: keys, collection: collection || r.isToMany)
            }
        }
        return result
    }

    // MARK: - Predicates

    mutating func makePredicate(for entity: String, depth: Int) -> (ObjectPredicate, [String: PropertyValue]) {
        var arguments: [String: PropertyValue] = [:]
        let predicate = makePredicate(for: entity, depth: depth, arguments: &arguments)
        return (predicate, arguments)
    }

    private mutating func makePredicate(
        for entity: String, depth: Int, arguments: inout [String: PropertyValue]
    )
        -> ObjectPredicate
    {
        if depth > 0 && chance(0.45) {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0:
                return .not(makePredicate(for: entity, depth: depth - 1, arguments: &arguments))
            case 1, 2:
                return .and(
                    (0..<Int.random(in: 2...3, using: &rng)).map { _ in
                        makePredicate(for: entity, depth: depth - 1, arguments: &arguments)
                    })
            default:
                return .or(
                    (0..<Int.random(in: 2...3, using: &rng)).map { _ in
                        makePredicate(for: entity, depth: depth - 1, arguments: &arguments)
                    })
            }
        }
        if chance(0.03) { return .constant(chance(0.5)) }
        return makeComparison(for: entity, arguments: &arguments)
    }

    /// A constant, as a literal or (sometimes) as a `$variable` with an argument.
    private mutating func constant(
        _ value: PropertyValue, _ arguments: inout [String: PropertyValue]
    )
        -> PredicateOperand
    {
        guard chance(0.3) else { return .literal(value) }
        variableCount += 1
        let name = "v\(variableCount)"
        arguments[name] = value
        return .variable(name)
    }

    /// A value a key path of this kind can be compared with, in any spelling the engine coerces.
    private mutating func value(for kind: Kind, stringPool: [String]? = nil) -> PropertyValue {
        if chance(0.12) { return .null }
        switch kind {
        case .attribute(.string): return .string(pick(stringPool ?? Self.strings))
        case .attribute(.int), .attribute(.double), .count:
            if kind == .count && chance(0.6) { return .int(Int64.random(in: 0...4, using: &rng)) }
            return chance(0.5) ? .int(pick(Self.ints)) : .double(pick(Self.doubles))
        case .attribute(.bool): return chance(0.7) ? .bool(chance(0.5)) : .int(chance(0.5) ? 1 : 0)
        case .attribute(.date):
            let date = Date(timeIntervalSince1970: pick(Self.seconds))
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: return .date(date)
            case 1: return .string(date.rfc3339String)
            default: return .double(date.timeIntervalSince1970)
            }
        case .attribute(.uuid):
            let u = pick(Self.uuids)
            return chance(0.5) ? .uuid(u) : .string(chance(0.5) ? u.uuidString : u.uuidString.lowercased())
        case .attribute(.binary):
            let data = pick(Self.blobs)
            return chance(0.5) ? .binary(data) : .string(data.base64EncodedString())
        case .attribute(.json): return .null
        case .object(let entity):
            let id = ObjectID(entity: entity, number: Int64.random(in: 1...(Self.counts[entity]! + 1), using: &rng))
            return chance(0.5) ? .reference(id) : .string(id.description)
        }
    }

    private mutating func makeComparison(
        for entity: String, arguments: inout [String: PropertyValue]
    ) -> ObjectPredicate {
        let path = pick(Self.keyPaths(from: entity))
        var ops: [ObjectPredicate.ComparisonOperator] = [.equal, .notEqual, .in]
        switch path.kind {
        case .attribute(.string):
            ops += [.less, .lessOrEqual, .greater, .greaterOrEqual, .between]
            ops += [.beginsWith, .endsWith, .contains, .like, .matches, .beginsWith, .contains, .like]
        case .attribute(.json), .object:
            break
        default:
            ops += [.less, .lessOrEqual, .greater, .greaterOrEqual, .between]
        }
        let op = pick(ops)
        let options: ObjectPredicate.StringOptions =
            path.kind == .attribute(.string) && chance(0.5)
            ? pick([.caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]]) : []
        var quantifier: ObjectPredicate.Quantifier?
        if path.isCollection { quantifier = pick([nil, .any, .all]) }

        let rhs: PredicateOperand
        switch op {
        case .in:
            rhs = .list((0..<Int.random(in: 0...3, using: &rng)).map { _ in .literal(value(for: path.kind)) })
        case .between:
            rhs = .list([constant(value(for: path.kind), &arguments), constant(value(for: path.kind), &arguments)])
        case .like:
            rhs = constant(value(for: path.kind, stringPool: Self.patterns + Self.strings), &arguments)
        case .matches:
            rhs = constant(value(for: path.kind, stringPool: Self.regexes), &arguments)
        default:
            // Sometimes another key path of a comparable type, from the same object.
            if !path.isCollection, chance(0.15),
                let other = Self.keyPaths(from: entity).filter({
                    !$0.isCollection && Self.comparable($0.kind, path.kind)
                }).randomElement(using: &rng)
            {
                rhs = other.expression
            } else {
                rhs = constant(value(for: path.kind), &arguments)
            }
        }
        // A symmetric comparison may put the constant or the collection on the left.
        if quantifier == nil, [.equal, .notEqual, .less, .greater].contains(op), chance(0.2) {
            let flipped: ObjectPredicate.ComparisonOperator = op == .less ? .greater : op == .greater ? .less : op
            return .comparison(.init(rhs, flipped, path.expression, options: options))
        }
        return .comparison(.init(path.expression, op, rhs, quantifier: quantifier, options: options))
    }

    private static func comparable(_ a: Kind, _ b: Kind) -> Bool {
        let numeric: [Kind] = [.attribute(.int), .attribute(.double), .count]
        if numeric.contains(a) && numeric.contains(b) { return true }
        if case .attribute(.json) = a { return false }
        return a == b
    }
}
