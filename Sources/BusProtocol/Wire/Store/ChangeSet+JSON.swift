import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// A committed transaction as a value: the `changes` of `store.save`'s answer (docs/protocol.md, "store.save"):
///
/// ```
/// {"txn":1236,"time":"2026-11-28T10:00:00.000Z","author":"…",
///  "inserted":[{"id","version","values":{all}}],
///  "updated":[{"id","version","values":{after the commit},"changed":["key",…],"previous":{changed keys before}}],
///  "deleted":[{"id","version","values":{last committed}}]}
/// ```
///
/// It is the `ChangeSet` the store committed, member for member: an updated or deleted object's `values` leave
/// out the to-many relationships the store did not read (as its snapshots do), which a context derives from the
/// other side.
extension ChangeSet: ModelJSONConvertible {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        try self.init(fields: JSONFields(json), model: model)
    }

    init(fields: JSONFields, model: Model) throws(RPCError) {
        let timeText = try fields.string("time")
        guard let time = Date(rfc3339: timeText) else { throw fields.error("time", "expected an RFC 3339 date-time") }
        self.init(
            txn: try fields.int64("txn"), time: time, author: try fields.optionalString("author"),
            inserted: try fields.objects("inserted") { (object) throws(RPCError) in
                try ObjectSnapshot(fields: object, model: model)
            },
            updated: try fields.objects("updated") { (object) throws(RPCError) in
                let snapshot = try ObjectSnapshot(fields: object, model: model)
                return Update(
                    snapshot: snapshot, changedKeys: Set(try object.strings("changed")),
                    previousValues: try model.typedValues(
                        object.optionalObject("previous") ?? [:], of: snapshot.id.entity,
                        path: object.path(of: "previous")))
            },
            deleted: try fields.objects("deleted") { (object) throws(RPCError) in
                try ObjectSnapshot(fields: object, model: model)
            })
    }

    public var json: JSONValue {
        .object([
            "txn": .int(txn), "time": .string(time.rfc3339String), "author": author.map(JSONValue.string) ?? .null,
            "inserted": .array(inserted.map(\.json)),
            "updated": .array(
                updated.map { update in
                    guard case .object(var members) = update.snapshot.json else { return update.snapshot.json }
                    members["changed"] = .array(update.changedKeys.sorted().map(JSONValue.string))
                    members["previous"] = .object(update.previousValues.mapValues(\.jsonValue))
                    return .object(members)
                }),
            "deleted": .array(deleted.map(\.json)),
        ])
    }
}
