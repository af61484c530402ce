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

/// `store.save`'s answer written as text (`Responder.succeed(writing:)`): the JSON of `json`, with the change set when
/// the result has one, without building its `JSONValue` tree.
extension SaveResult: JSONWritable {
    package func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"txn":"#, into: &output)
        JSONWriter.appendInteger(txn, into: &output)
        JSONWriter.appendLiteral(#","ids":"#, into: &output)
        if ids.count > 1 {
            // Two inserts could be named alike (a ref spelled like a reserved ID): `json`'s object keeps one of them.
            try writer.write(json(includingChanges: false)["ids"] ?? .object([:]), into: &output)
        } else {
            output.append(UInt8(ascii: "{"))
            for (temporary, permanent) in ids {
                JSONWriter.appendString(temporary.temporaryReference ?? temporary.description, into: &output)
                output.append(UInt8(ascii: ":"))
                permanent.writeJSON(into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
        JSONWriter.appendLiteral(#","versions":{"#, into: &output)
        var first = true
        for (id, version) in versions {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            id.writeJSON(into: &output)
            output.append(UInt8(ascii: ":"))
            JSONWriter.appendInteger(version, into: &output)
        }
        output.append(UInt8(ascii: "}"))
        if let changes {
            JSONWriter.appendLiteral(#","changes":"#, into: &output)
            try writer.write(changes.json, into: &output)
        }
        output.append(UInt8(ascii: "}"))
    }
}
