import ContextBusObjectGraph
import ContextBusSupport

/// `store.save`'s result: `{"txn":1235,"ids":{"r1":"Reading/13"},"versions":{"Reading/13":1,"Reading/3":3}}`, and
/// `"changes":{…}` (the committed `ChangeSet`) when the request asked for it with `"changes": true`
/// (docs/protocol.md, "store.save").
///
/// `ids` maps each insert's name (its `ref`, or `insert[i]`) to its permanent ID: the references of the request's
/// temporary IDs, so that reading it back gives the temporary IDs again.
extension SaveResult: ModelJSONConvertible {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        try self.init(json: json, model: Optional(model))
    }

    /// Reads the result; `model` is needed only when it carries `changes`.
    public init(json: JSONValue, model: Model?) throws(RPCError) {
        let fields = try JSONFields(json)
        let txn = try fields.int64("txn")
        var ids: [ObjectID: ObjectID] = [:]
        for (ref, id) in try fields.optionalObject("ids") ?? [:] {
            let permanent = try JSONFields.objectID(id, path: "ids.\(ref)")
            ids[ObjectID(entity: permanent.entity, temporaryReference: ref)] = permanent
        }
        var versions: [ObjectID: Int64] = [:]
        for (key, version) in try fields.optionalObject("versions") ?? [:] {
            guard let id = ObjectID(string: key) else {
                throw .invalidParams(field: "versions.\(key)", message: "expected an object ID like \"Entity/12\"")
            }
            guard let number = version.intValue else {
                throw .invalidParams(field: "versions.\(key)", message: "expected an integer")
            }
            versions[id] = number
        }
        var changes: ChangeSet?
        if let json = fields.value("changes") {
            guard let model else {
                throw .invalidParams(field: "changes", message: "reading a change set needs the store's model")
            }
            changes = try ChangeSet(fields: JSONFields(json, path: "changes"), model: model)
        }
        self.init(txn: txn, ids: ids, versions: versions, changes: changes)
    }

    /// The wire form; `changes` is written only when the result has them and `includingChanges` is set (the
    /// request asked for them).
    public func json(includingChanges: Bool) -> JSONValue {
        var names: [String: JSONValue] = [:]
        for (temporary, permanent) in ids {
            names[temporary.temporaryReference ?? temporary.description] = .string(permanent.description)
        }
        var versionMembers: [String: JSONValue] = [:]
        for (id, version) in versions { versionMembers[id.description] = .int(version) }
        var members: [String: JSONValue] = [
            "txn": .int(txn), "ids": .object(names), "versions": .object(versionMembers),
        ]
        if includingChanges, let changes { members["changes"] = changes.json }
        return .object(members)
    }

    /// The wire form with the change set when the result has one.
    public var json: JSONValue { json(includingChanges: true) }
}
