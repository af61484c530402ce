import ContextBusObjectGraph
import ContextBusSupport

// The conversions between the store's wire types (`StoreObject`, `FetchParams`, `SaveParams`, `SaveResult`)
// and Shared's store types (`ObjectSnapshot`, `FetchRequest`, `SaveRequest`, `SaveResult`), used by both ends:
// `storesvc` answers with them, `RemoteStore` calls with them. Values are typed with the model, as
// `PROTOCOL.md` ("Values are JSON") spells them.

extension StoreObject {
    /// The wire form of a committed snapshot.
    public init(_ snapshot: ObjectSnapshot) {
        self.init(id: snapshot.id, version: snapshot.version, values: snapshot.values.mapValues(\.jsonValue))
    }

    /// The snapshot this object describes, each value read with the type `model` gives its key.
    ///
    /// - Throws: `-32602` naming `path.values.<key>` for an unknown entity or key or a value of the wrong type.
    public func snapshot(in model: Model, path: String = "object") throws(RPCError) -> ObjectSnapshot {
        ObjectSnapshot(id: id, version: version, values: try model.typedValues(values, of: id.entity, path: path))
    }
}

extension Model {
    /// Reads wire values of an object of `entityName`: attributes with their types, relationships as IDs
    /// (to-many sorted by ID, as snapshots hold them).
    ///
    /// - Throws: `-32602` with `data.field` `path.values.<key>`.
    public func typedValues(
        _ json: [String: JSONValue], of entityName: String, path: String
    ) throws(RPCError) -> [String: PropertyValue] {
        guard let entity = entity(named: entityName) else {
            throw .invalidParams(field: "\(path).id", message: "unknown entity '\(entityName)'")
        }
        var values: [String: PropertyValue] = [:]
        values.reserveCapacity(json.count)
        for (key, value) in json {
            let field = "\(path).values.\(key)"
            if let attribute = entity.attribute(named: key) {
                guard let typed = PropertyValue(json: value, type: attribute.type) else {
                    throw .invalidParams(
                        field: field, message: "expected \(SaveRequestDecoder.describe(attribute.type)) or null")
                }
                values[key] = typed
            } else if let relationship = entity.relationship(named: key) {
                guard let typed = PropertyValue(json: value, toMany: relationship.isToMany) else {
                    throw .invalidParams(field: field, message: "expected object IDs like \"Entity/12\"")
                }
                if case .references(let ids) = typed {
                    values[key] = .references(ids.sorted())
                } else {
                    values[key] = typed
                }
            } else {
                throw .invalidParams(field: field, message: "\(entityName) has no attribute or relationship '\(key)'")
            }
        }
        return values
    }
}

extension FetchParams {
    /// `store.fetch`'s params for a store fetch request (the predicate as its format string, the arguments as
    /// their wire values), asking for to-many relationships as `toMany` says.
    public init(_ request: FetchRequest, toMany: ReadToMany = .values) {
        self.init(
            entity: request.entity, predicate: request.predicate?.predicateFormat,
            arguments: request.arguments.mapValues(\.jsonValue), sort: request.sortDescriptors,
            limit: request.fetchLimit, offset: request.fetchOffset, resultType: request.resultType, toMany: toMany)
    }

    /// The store fetch request these params describe.
    ///
    /// - Throws: `-32602` with `data.field` `where` and `data.position` when the predicate does not parse.
    public func fetchRequest() throws(RPCError) -> FetchRequest {
        FetchRequest(
            entity: entity, predicate: try PredicateInput.predicate(predicate),
            arguments: PredicateInput.arguments(arguments), sortDescriptors: sort, fetchLimit: limit,
            fetchOffset: offset, resultType: resultType)
    }
}

extension FetchResult {
    /// The wire form of a store fetch's answer.
    public init(_ result: StoreFetchResult) {
        switch result.content {
        case .objects(let snapshots): self.init(txn: result.txn, content: .objects(snapshots.map(StoreObject.init)))
        case .ids(let ids): self.init(txn: result.txn, content: .ids(ids))
        case .count(let count): self.init(txn: result.txn, content: .count(count))
        }
    }

    /// The store fetch result this answer describes, objects typed with `model`.
    public func storeResult(in model: Model) throws(RPCError) -> StoreFetchResult {
        switch content {
        case .objects(let objects):
            var snapshots: [ObjectSnapshot] = []
            snapshots.reserveCapacity(objects.count)
            for (i, object) in objects.enumerated() {
                snapshots.append(try object.snapshot(in: model, path: "objects[\(i)]"))
            }
            return StoreFetchResult(txn: txn, content: .objects(snapshots))
        case .ids(let ids): return StoreFetchResult(txn: txn, content: .ids(ids))
        case .count(let count): return StoreFetchResult(txn: txn, content: .count(count))
        }
    }
}

extension GetResult {
    /// The wire form of `objects(with:)`'s answer.
    public init(_ result: StoreObjectsResult) {
        self.init(txn: result.txn, objects: result.objects.map(StoreObject.init), missing: result.missing)
    }

    /// The store result this answer describes, objects typed with `model`.
    public func storeResult(in model: Model) throws(RPCError) -> StoreObjectsResult {
        var snapshots: [ObjectSnapshot] = []
        snapshots.reserveCapacity(objects.count)
        for (i, object) in objects.enumerated() {
            snapshots.append(try object.snapshot(in: model, path: "objects[\(i)]"))
        }
        return StoreObjectsResult(txn: txn, objects: snapshots, missing: missing)
    }
}

extension SaveParams {
    /// `store.save`'s params for a store save request: inserts named by their temporary IDs' references (as
    /// `ref`), relationship values pointing at inserts as `{"entity","ref"}`.
    ///
    /// - Throws: `-32602` for an insert whose ID is not temporary: the protocol has no way to reserve IDs, so
    ///   a permanent ID can only have come from another store.
    public init(_ request: SaveRequest) throws(RPCError) {
        var inserts: [Insert] = []
        inserts.reserveCapacity(request.inserts.count)
        for (i, insert) in request.inserts.enumerated() {
            guard let ref = insert.id.temporaryReference else {
                throw .invalidParams(
                    field: "insert[\(i)].id",
                    message: "\(insert.id) is permanent; storesvc assigns IDs to inserts, which must be temporary")
            }
            inserts.append(
                Insert(entity: insert.id.entity, ref: ref, values: insert.values.mapValues(\.jsonValue)))
        }
        self.init(
            inserts: inserts,
            updates: request.updates.map { update in
                Update(
                    id: update.id, version: update.version, values: update.values.mapValues(\.jsonValue),
                    original: update.original.isEmpty ? nil : update.original.mapValues(\.jsonValue))
            },
            deletes: request.deletes.map { Delete(id: $0.id, version: $0.version) },
            mergePolicy: request.mergePolicy, durability: request.durability, author: request.author)
    }
}

extension SaveResult {
    /// The wire form of a committed save: each insert's permanent ID under the name the request gave it
    /// (`names`: temporary ID → `ref`).
    public init(_ result: ContextBusObjectGraph.SaveResult, names: [ObjectID: String]) {
        var ids: [String: ObjectID] = [:]
        for (temporary, permanent) in result.ids {
            ids[names[temporary] ?? temporary.temporaryReference ?? temporary.description] = permanent
        }
        self.init(txn: result.txn, ids: ids, versions: result.versions)
    }
}
