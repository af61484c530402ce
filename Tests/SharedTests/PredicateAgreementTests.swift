import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// Property: for random model-conforming objects stored in a real SQLite database and random
/// predicates, in-memory evaluation selects exactly the IDs that the compiled SQL selects.
struct PredicateAgreementTests {
    static let seeds: [UInt64] = [1, 2, 3, 42, 1_234_567, 0xDEAD_BEEF, 77, 2026]
    static let predicatesPerEntity = 40 * TestScale.factor

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
                expectEqual(memory, sql, "\(context) — SQL: \(fragment.sql) \(fragment.bindings)")

                // The format string reads back to a predicate with the same answers.
                let reparsed = try PredicateEvaluator(
                    ObjectPredicate(format: template.predicateFormat).binding(arguments), entity: entity, in: model)
                let again = Set(
                    ids.filter { reparsed.evaluate(values: graph.objects[$0]!, lookup: graph.lookup) }.map {
                        $0.number!
                    })
                expectEqual(again, memory, context)
                checked += 1
                if !memory.isEmpty && memory.count < ids.count { discriminating += 1 }
            }
        }
        expectEqual(checked, 3 * Self.predicatesPerEntity)
        // The generator must produce predicates that split the objects, or agreement proves little.
        expectTrue(
            discriminating * 3 > checked,
            "seed \(seed): only \(discriminating) of \(checked) predicates split the objects")
    }

    /// `docs/protocol.md`'s `store.fetch` example, against the default model, where `Reading.value`
    /// is the bytes a characteristic read returned: compared with a number, they are read as an
    /// unsigned little-endian integer (Bluetooth GATT's byte order).
    @Test(arguments: [PropertyValue.json(.int(5)), .int(5), .double(5)])
    func protocolFetchExampleSelectsTheSameReadingsInMemoryAndInSQL(min: PropertyValue) throws {
        let format = "value > $min AND device.name BEGINSWITH 'th'"
        let model = Model.deviceReadings
        let template = try ObjectPredicate(format: format)
        try template.validate(for: "Reading", in: model)
        let predicate = try template.binding(["min": min])
        try predicate.validate(for: "Reading", in: model)

        var graph = ObjectGraphFixture()
        let devices: [Int64: PropertyValue] = [1: .string("thermometer"), 2: .string("Thermometer"), 3: .null]
        for (n, name) in devices {
            graph.objects[ObjectID(entity: "Device", number: n)] = [
                "address": .string("AA:BB:CC:DD:EE:0\(n)"), "name": name, "connected": .bool(true),
            ]
        }
        // (reading, device, bytes)
        let readings: [(Int64, Int64?, [UInt8])] = [
            (1, 1, [6]),  // 6 > 5
            (2, 1, [5]),  // 5, not above
            (3, 1, [0x00, 0x01]),  // 256 little-endian (1 big-endian)
            (4, 1, [0x01, 0x00]),  // 1 little-endian (256 big-endian)
            (5, 1, []),  // no bytes: nil
            (6, 1, [UInt8](repeating: 0xFF, count: 9)),  // longer than 8 bytes: nil
            (7, 2, [0xFF]),  // 255, but "Thermometer" does not begin with "th"
            (8, nil, [10]),  // 10, but no device
            (9, 3, [10]),  // 10, but a device without a name
            (10, 1, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),  // 2^64 − 1
        ]
        for (n, device, bytes) in readings {
            let deviceID = device.map { ObjectID(entity: "Device", number: $0) }
            graph.objects[ObjectID(entity: "Reading", number: n)] = [
                "characteristic": .string("2a19"), "value": .binary(Data(bytes)),
                "time": .date(Date(timeIntervalSince1970: Double(n))),
                "device": deviceID.map(PropertyValue.reference) ?? .null,
            ]
            if let deviceID, case .references(let ids)? = graph.objects[deviceID]?["readings"] {
                graph.objects[deviceID]?["readings"] = .references(ids + [ObjectID(entity: "Reading", number: n)])
            } else if let deviceID {
                graph.objects[deviceID]?["readings"] = .references([ObjectID(entity: "Reading", number: n)])
            }
        }
        let expected: Set<Int64> = [1, 3, 10]

        let evaluator = try PredicateEvaluator(predicate, entity: "Reading", in: model)
        let memory = Set(
            graph.objects.filter {
                $0.key.entity == "Reading" && evaluator.evaluate(values: $0.value, lookup: graph.lookup)
            }
            .map { $0.key.number! })
        expectEqual(memory, expected)

        let db = try PredicateTestDatabase(model: model)
        for (id, values) in graph.objects.sorted(by: { $0.key < $1.key }) { try db.insert(id, values) }
        let fragment = try PredicateSQLCompiler.compile(predicate, entity: "Reading", schema: db.schema, alias: "t")
        try expectEqual(db.select("Reading", where: fragment), expected, "SQL: \(fragment.sql)")
        expectTrue(!fragment.sql.contains("5") && !fragment.sql.contains("'"), "values are bound: \(fragment.sql)")
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

    /// A short random byte string, as a BLE characteristic read returns.
    private mutating func randomBytes() -> Data {
        if chance(0.2) { return pick(Self.blobs) }
        return Data(
            (0..<pick(Self.byteCounts)).map { _ in
                chance(0.7) ? pick(Self.bytes) : UInt8.random(in: 0...255, using: &rng)
            })
    }

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
    /// Bytes for random binary values: small numbers, both sides of the sign bits, and 0xFF.
    static let bytes: [UInt8] = [0, 0, 1, 2, 5, 0x64, 0x7F, 0x80, 0xFF]
    /// Lengths of random binary values: mostly 1–8 bytes (read as numbers), some 0, 9 and 10 (nil).
    static let byteCounts = [0, 1, 1, 1, 2, 2, 3, 4, 4, 8, 8, 9, 10]
    /// Numbers compared with binary values: near the one- and two-byte values, and at the edges.
    static let binaryNumbers: [PropertyValue] = [
        .int(0), .int(1), .int(2), .int(5), .int(100), .int(127), .int(128), .int(255), .int(256), .int(0x7F05),
        .int(65_535), .int(-1), .int(.max), .double(0.5), .double(99.5), .double(255.5),
        .double(9_223_372_036_854_775_808.0), .double(0x1p64), .double(1e300), .double(-0.0),
    ]
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
                "payload": chance(0.2) ? .null : .binary(randomBytes()),
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
                "blob": chance(0.2) ? .null : .binary(randomBytes()),
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
        /// Not a key path's kind: the numbers a binary attribute is compared with.
        case binaryAsNumber
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
            let data = chance(0.7) ? pick(Self.blobs) : randomBytes()
            return chance(0.5) ? .binary(data) : .string(data.base64EncodedString())
        case .binaryAsNumber: return pick(Self.binaryNumbers)
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
        // A binary attribute is compared with numbers (read as an integer) or with bytes.
        let kind = path.kind == .attribute(.binary) && chance(0.6) ? .binaryAsNumber : path.kind

        let rhs: PredicateOperand
        switch op {
        case .in:
            rhs = .list((0..<Int.random(in: 0...3, using: &rng)).map { _ in .literal(value(for: kind)) })
        case .between:
            rhs = .list([constant(value(for: kind), &arguments), constant(value(for: kind), &arguments)])
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
                rhs = constant(value(for: kind), &arguments)
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
        // A binary attribute against a number reads as an unsigned little-endian integer.
        if (a == .attribute(.binary) && numeric.contains(b)) || (b == .attribute(.binary) && numeric.contains(a)) {
            return true
        }
        if case .attribute(.json) = a { return false }
        return a == b
    }
}
