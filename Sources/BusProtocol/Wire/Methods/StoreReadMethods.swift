import ContextBusObjectGraph
import ContextBusSupport

// The store's read methods: `store.model`, `store.fetch`, `store.get` (`docs/protocol.md`, "Store methods").
// Property values stay `JSONValue` here; the store service converts them with the model
// (`PropertyValue(json:type:)`, `PropertyValue.jsonValue`).

/// `store.model` → the model as JSON.
public enum StoreModel: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = ModelResult
    public static let name = "store.model"
}

/// `store.fetch`.
public enum StoreFetch: RPCMethod {
    public typealias Params = FetchParams
    public typealias Result = StoreFetchResult
    public static let name = "store.fetch"
}

/// `store.get` `{"ids":[…]}`.
public enum StoreGet: RPCMethod {
    public typealias Params = GetParams
    public typealias Result = StoreObjectsResult
    public static let name = "store.get"
}

/// `{"version":"<hash>","entities":[…],"previousVersions"?:["<hash>"…]}`: the served model, its version hash, and
/// the version hashes of the models the database was made with before, oldest first (left out when there are
/// none, so that a store that never migrated answers as it always did).
public struct ModelResult: JSONConvertible, Hashable {
    public var version: String
    public var model: Model
    public var previousVersions: [String]

    public init(model: Model, previousVersions: [String] = []) {
        self.version = model.versionHash
        self.model = model
        self.previousVersions = previousVersions
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        version = try fields.string("version")
        do {
            model = try Model(json: json)
        } catch {
            throw .invalidParams(field: "entities", message: error.description)
        }
        guard let list = json["previousVersions"] else {
            previousVersions = []
            return
        }
        guard let items = list.arrayValue, items.allSatisfy({ $0.stringValue != nil }) else {
            throw .invalidParams(field: "previousVersions", message: "expected an array of version hashes")
        }
        previousVersions = items.compactMap(\.stringValue)
    }

    /// The model's JSON with `version` (and `previousVersions`) as this result holds them.
    public var json: JSONValue {
        guard case .object(var members) = model.jsonValue else { return model.jsonValue }
        members["version"] = .string(version)
        if !previousVersions.isEmpty { members["previousVersions"] = .array(previousVersions.map(JSONValue.string)) }
        return .object(members)
    }
}

/// One object as the store returns it: `{"id":"Reading/12","version":3,"values":{…}}`.
///
/// Used by `store.fetch`, `store.get` and `store.changed` (where `values` holds all values of
/// inserted objects and only the changed keys of updated ones).
public struct StoreObject: JSONConvertible, Hashable {
    public var id: ObjectID
    public var version: Int64
    public var values: [String: JSONValue]
    /// To-many key → members added and removed: only in `updated` entries of `store.changed` events for a
    /// subscription with `"toMany":"changes"` (an addition to the design contract, in `docs/protocol.md`); the key is then not in `values`.
    /// Sent only when not empty.
    public var toManyChanges: [String: ToManyChange]

    public init(
        id: ObjectID, version: Int64, values: [String: JSONValue], toManyChanges: [String: ToManyChange] = [:]
    ) {
        self.id = id
        self.version = version
        self.values = values
        self.toManyChanges = toManyChanges
    }

    public init(json: JSONValue) throws(RPCError) {
        try self.init(fields: JSONFields(json))
    }

    package init(fields: JSONFields) throws(RPCError) {
        id = try fields.objectID("id")
        version = try fields.int64("version")
        values = try fields.optionalObject("values") ?? [:]
        var toManyChanges: [String: ToManyChange] = [:]
        if fields.value("toManyChanges") != nil {
            let changes = try fields.nested("toManyChanges")
            for key in (try fields.object("toManyChanges")).keys {
                let change = try changes.nested(key)
                toManyChanges[key] = ToManyChange(
                    added: try change.objectIDs("added"), removed: try change.objectIDs("removed"))
            }
        }
        self.toManyChanges = toManyChanges
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id.description), "version": .int(version), "values": .object(values),
        ]
        if !toManyChanges.isEmpty {
            members["toManyChanges"] = .object(
                toManyChanges.mapValues { change in
                    .object([
                        "added": .array(change.added.map { .string($0.description) }),
                        "removed": .array(change.removed.map { .string($0.description) }),
                    ])
                })
        }
        return .object(members)
    }
}

/// `{"entity":"Reading","where":"value > $min","args":{"min":5},"sort":[{"key":"time","ascending":false}],
/// "limit":100,"offset":0,"result":"objects","toMany":"faults"}`; only `entity` is required.
///
/// `toMany` is an addition to the design contract, documented in `docs/protocol.md` and `docs/decisions/tomany-faults.md`.
public struct FetchParams: JSONConvertible, Hashable {
    public var entity: String
    /// The predicate text (`where` on the wire), parsed by the store.
    public var predicate: String?
    /// Values for the predicate's `$variables` (`args` on the wire).
    public var arguments: [String: JSONValue]
    /// Sort keys, `ascending` defaulting to true.
    public var sort: [ObjectSortDescriptor]
    public var limit: Int?
    public var offset: Int
    /// `objects` (default), `ids` or `count`.
    public var resultType: FetchRequest.ResultType
    /// Whether objects carry their to-many arrays (`toMany` on the wire; only `objects` results have any).
    public var toMany: ReadToMany

    public init(
        entity: String, predicate: String? = nil, arguments: [String: JSONValue] = [:],
        sort: [ObjectSortDescriptor] = [],
        limit: Int? = nil, offset: Int = 0, resultType: FetchRequest.ResultType = .objects,
        toMany: ReadToMany = .values
    ) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.resultType = resultType
        self.toMany = toMany
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        entity = try fields.string("entity")
        predicate = try fields.optionalString("where")
        arguments = try fields.optionalObject("args") ?? [:]
        sort = try fields.objects("sort") { (key) throws(RPCError) in
            let path = try key.string("key")
            guard !path.isEmpty, !path.split(separator: ".", omittingEmptySubsequences: false).contains("") else {
                throw key.error("key", "expected a key path like \"time\" or \"device.name\"")
            }
            return ObjectSortDescriptor(path, ascending: try key.optionalBool("ascending") ?? true)
        }
        limit = try fields.optionalInt("limit", atLeast: 0)
        offset = try fields.optionalInt("offset", atLeast: 0) ?? 0
        let result = try fields.optionalString("result") ?? "objects"
        guard let type = FetchRequest.ResultType(rawValue: result) else {
            throw fields.error("result", "must be 'objects', 'ids' or 'count'")
        }
        resultType = type
        toMany = try fields.readToMany()
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["entity": .string(entity)]
        if let predicate { members["where"] = .string(predicate) }
        if !arguments.isEmpty { members["args"] = .object(arguments) }
        if !sort.isEmpty {
            members["sort"] = .array(
                sort.map {
                    .object(["key": .string($0.keyPath.joined(separator: ".")), "ascending": .bool($0.ascending)])
                })
        }
        if let limit { members["limit"] = .int(Int64(limit)) }
        members["offset"] = .int(Int64(offset))
        members["result"] = .string(resultType.rawValue)
        if toMany != .values { members["toMany"] = .string(toMany.rawValue) }
        return .object(members)
    }
}

/// `{"ids":["Reading/3", …],"toMany"?:"faults"}`.
///
/// `toMany` is an addition to the design contract, documented in `docs/protocol.md` and `docs/decisions/tomany-faults.md`.
public struct GetParams: JSONConvertible, Hashable {
    public var ids: [ObjectID]
    /// Whether objects carry their to-many arrays (`toMany` on the wire).
    public var toMany: ReadToMany

    public init(ids: [ObjectID], toMany: ReadToMany = .values) {
        self.ids = ids
        self.toMany = toMany
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        _ = try fields.array("ids")
        ids = try fields.objectIDs("ids")
        toMany = try fields.readToMany()
    }

    public var json: JSONValue {
        var members: [String: JSONValue] = ["ids": .array(ids.map { .string($0.description) })]
        if toMany != .values { members["toMany"] = .string(toMany.rawValue) }
        return .object(members)
    }
}

/// `store.aggregate`: counts, sums, means, minima and maxima per group of keys and date windows.
public enum StoreAggregate: RPCMethod {
    public typealias Params = AggregateRequest
    public typealias Result = AggregateResult
    public static let name = "store.aggregate"
}
