import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// A `store.fetch` or `store.get` answer as `ctxbus` prints it: objects with their values as the wire has them
/// (JSON), read without the model, which printing only uses for column order and types (`ObjectRendering`).
struct StoreObjectList {
    enum Content {
        case objects([StoreObject])
        case ids([ObjectID])
        case count(Int)
    }

    var txn: Int64
    var content: Content
    var missing: [ObjectID] = []

    /// The objects of the content, or none.
    var objects: [StoreObject] {
        if case .objects(let objects) = content { return objects }
        return []
    }

    /// Reads `store.fetch`'s result: `objects`, `ids` or `count`.
    init(fetchResult json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        txn = try fields.int64("txn")
        if fields.value("objects") != nil {
            content = .objects(
                try fields.objects("objects") { (object) throws(RPCError) in try StoreObject(fields: object) })
        } else if fields.value("ids") != nil {
            content = .ids(try fields.objectIDs("ids"))
        } else {
            content = .count(try fields.int("count"))
        }
    }

    /// Reads `store.get`'s result: `objects` and `missing`.
    init(getResult json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        txn = try fields.int64("txn")
        content = .objects(
            try fields.objects("objects") { (object) throws(RPCError) in try StoreObject(fields: object) })
        missing = try fields.objectIDs("missing")
    }
}
