import ContextBusObjectGraph
import ContextBusSupport

// Live queries on the wire: `store.watch`, `store.unwatch` and the `store.results` event (docs/protocol.md, "Live
// queries on the wire").

/// `store.watch`: a fetch kept current; its params are `store.fetch`'s (`result` and `toMany` are ignored: a watch
/// lists objects, to-many relationships as whole arrays).
public enum StoreWatch: RPCMethod {
    public typealias Params = FetchParams
    public typealias Result = StoreWatchResult
    public static let name = "store.watch"
}

/// `store.unwatch` `{"watch":5}` → `{}`.
public enum StoreUnwatch: RPCMethod {
    public typealias Params = UnwatchParams
    public typealias Result = EmptyObject
    public static let name = "store.unwatch"
}

/// `{"watch":5,"txn":1235,"objects":[…]}`: the objects a `store.fetch` of the request returns at `txn`, in order.
public struct StoreWatchResult: ModelJSONConvertible, Hashable {
    public var watch: Int64
    public var txn: Int64
    public var objects: [ObjectSnapshot]

    public init(watch: Int64, txn: Int64, objects: [ObjectSnapshot]) {
        self.watch = watch
        self.txn = txn
        self.objects = objects
    }

    public init(json: JSONValue, model: Model) throws(RPCError) {
        let fields = try JSONFields(json)
        self.init(
            watch: try fields.int64("watch"), txn: try fields.int64("txn"),
            objects: try fields.objects("objects") { (object) throws(RPCError) in
                try ObjectSnapshot(fields: object, model: model)
            })
    }

    public var json: JSONValue {
        .object(["watch": .int(watch), "txn": .int(txn), "objects": .array(objects.map(\.json))])
    }
}

/// `{"watch":5}`.
public struct UnwatchParams: JSONConvertible, Hashable {
    public var watch: Int64

    public init(watch: Int64) {
        self.watch = watch
    }

    public init(json: JSONValue) throws(RPCError) {
        watch = try JSONFields(json).int64("watch")
    }

    public var json: JSONValue { .object(["watch": .int(watch)]) }
}

/// The event `store.results`: how a watch's ordered list changed in one transaction. Removing `removed` (indexes into
/// the previous list, highest first), then inserting `inserted` (indexes into the new list, lowest first), then
/// applying `updated` (indexes into the new list) to the previous list gives exactly what a `store.fetch` returns at
/// `txn`. An object that moves is removed and inserted.
public struct ResultsEvent: RPCEventPayload, Hashable {
    public static let method = "store.results"

    /// An object that entered the list (or moved): its index in the new list, with all its values.
    public struct Insertion: Sendable, Hashable {
        public var index: Int
        public var object: ObjectSnapshot

        public init(index: Int, object: ObjectSnapshot) {
            self.index = index
            self.object = object
        }
    }

    /// An object that stayed in place and changed: its index in the new list, version, and changed keys' values.
    public struct Update: Sendable, Hashable {
        public var index: Int
        public var id: ObjectID
        public var version: Int64
        public var values: [String: JSONValue]

        public init(index: Int, id: ObjectID, version: Int64, values: [String: JSONValue]) {
            self.index = index
            self.id = id
            self.version = version
            self.values = values
        }
    }

    public var watch: Int64
    public var txn: Int64
    public var removed: [Int]
    public var inserted: [Insertion]
    public var updated: [Update]

    public init(watch: Int64, txn: Int64, removed: [Int], inserted: [Insertion], updated: [Update]) {
        self.watch = watch
        self.txn = txn
        self.removed = removed
        self.inserted = inserted
        self.updated = updated
    }

    /// Reads the event; inserted objects' values stay as the wire has them (`.json`), as a client without the model
    /// sees them.
    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        watch = try fields.int64("watch")
        txn = try fields.int64("txn")
        removed = try fields.elements("removed") { (item, i) throws(RPCError) in
            guard let index = item.intValue, index >= 0 else {
                throw .invalidParams(field: "removed[\(i)]", message: "expected an index")
            }
            return Int(index)
        }
        inserted = try fields.objects("inserted") { (insertion) throws(RPCError) in
            let object = try insertion.nested("object")
            return Insertion(
                index: try insertion.int("index"),
                object: ObjectSnapshot(
                    id: try object.objectID("id"), version: try object.int64("version"),
                    values: (try object.optionalObject("values") ?? [:]).mapValues(PropertyValue.json)))
        }
        updated = try fields.objects("updated") { (update) throws(RPCError) in
            Update(
                index: try update.int("index"), id: try update.objectID("id"), version: try update.int64("version"),
                values: try update.optionalObject("values") ?? [:])
        }
    }

    public var json: JSONValue {
        .object([
            "watch": .int(watch), "txn": .int(txn), "removed": .array(removed.map { .int(Int64($0)) }),
            "inserted": .array(
                inserted.map { .object(["index": .int(Int64($0.index)), "object": $0.object.json]) }),
            "updated": .array(
                updated.map {
                    .object([
                        "index": .int(Int64($0.index)), "id": .string($0.id.description), "version": .int($0.version),
                        "values": .object($0.values),
                    ])
                }),
        ])
    }
}
