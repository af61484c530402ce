public import ContextBusObjectGraph
public import ContextBusSupport

/// `store.get`'s result: `{"txn","objects":[…],"missing":[…]}` (docs/protocol.md, "store.get").
///
/// Servers write it straight from the store's snapshots as text (`JSONWritable`: no intermediate `JSONValue`
/// dictionaries); `json` is the same JSON as a value.
///
/// ```swift
/// responder.succeed(writing: try store.objects(with: ids))
/// ```
extension StoreObjectsResult: ModelJSONConvertible, JSONWritable {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        let fields = try JSONFields(json)
        self.init(
            txn: try fields.int64("txn"),
            objects: try fields.objects("objects") { (object) throws(RPCError) in
                try ObjectSnapshot(fields: object, model: model)
            },
            missing: try fields.objectIDs("missing"))
    }

    public var json: JSONValue {
        .object([
            "txn": .int(txn), "objects": .array(objects.map(\.json)),
            "missing": .array(missing.map { .string($0.description) }),
        ])
    }

    public func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"txn":"#, into: &output)
        JSONWriter.appendInteger(txn, into: &output)
        JSONWriter.appendLiteral(#","objects":["#, into: &output)
        for (index, object) in objects.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            try object.writeJSON(into: &output, writer: writer)
        }
        JSONWriter.appendLiteral(#"],"missing":["#, into: &output)
        for (index, id) in missing.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(id.description, into: &output)
        }
        JSONWriter.appendLiteral("]}", into: &output)
    }
}

/// `store.fetch`'s result: `{"txn","objects":[…]}`, `{"txn","ids":[…]}` or `{"txn","count":n}` (docs/protocol.md,
/// "store.fetch"); written as text like `StoreObjectsResult`.
extension StoreFetchResult: ModelJSONConvertible, JSONWritable {
    public init(json: JSONValue, model: Model) throws(RPCError) {
        let fields = try JSONFields(json)
        let txn = try fields.int64("txn")
        if fields.value("objects") != nil {
            self.init(
                txn: txn,
                content: .objects(
                    try fields.objects("objects") { (object) throws(RPCError) in
                        try ObjectSnapshot(fields: object, model: model)
                    }))
        } else if fields.value("ids") != nil {
            self.init(txn: txn, content: .ids(try fields.objectIDs("ids")))
        } else if let count = try fields.optionalInt("count", atLeast: 0) {
            self.init(txn: txn, content: .count(count))
        } else {
            throw .invalidParams(field: "objects", message: "expected one of 'objects', 'ids' or 'count'")
        }
    }

    public var json: JSONValue {
        switch content {
        case .objects(let objects): return .object(["txn": .int(txn), "objects": .array(objects.map(\.json))])
        case .ids(let ids): return .object(["txn": .int(txn), "ids": .array(ids.map { .string($0.description) })])
        case .count(let count): return .object(["txn": .int(txn), "count": .int(Int64(count))])
        }
    }

    public func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"txn":"#, into: &output)
        JSONWriter.appendInteger(txn, into: &output)
        switch content {
        case .objects(let objects):
            JSONWriter.appendLiteral(#","objects":["#, into: &output)
            for (index, object) in objects.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try object.writeJSON(into: &output, writer: writer)
            }
            JSONWriter.appendLiteral("]}", into: &output)
        case .ids(let ids):
            JSONWriter.appendLiteral(#","ids":["#, into: &output)
            for (index, id) in ids.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(id.description, into: &output)
            }
            JSONWriter.appendLiteral("]}", into: &output)
        case .count(let count):
            JSONWriter.appendLiteral(#","count":"#, into: &output)
            JSONWriter.appendInteger(Int64(count), into: &output)
            output.append(UInt8(ascii: "}"))
        }
    }
}

extension ObjectSnapshot {
    /// `{"id":…,"version":…,"values":{…}}`: `json` as text.
    func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"id":"#, into: &output)
        id.writeJSON(into: &output)
        JSONWriter.appendLiteral(#","version":"#, into: &output)
        JSONWriter.appendInteger(version, into: &output)
        JSONWriter.appendLiteral(#","values":{"#, into: &output)
        var first = true
        for (key, value) in values {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.appendString(key, into: &output)
            output.append(UInt8(ascii: ":"))
            try value.writeJSON(into: &output, writer: writer)
        }
        JSONWriter.appendLiteral("}}", into: &output)
    }
}

extension PropertyValue {
    /// `jsonValue` as text: the common scalars directly, the rest through their `jsonValue`.
    func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        switch self {
        case .null: JSONWriter.appendLiteral("null", into: &output)
        case .string(let string): JSONWriter.appendString(string, into: &output)
        case .int(let int): JSONWriter.appendInteger(int, into: &output)
        case .double(let double): try JSONWriter.appendDouble(double, into: &output)
        case .bool(let bool): JSONWriter.appendLiteral(bool ? "true" : "false", into: &output)
        case .date(let date): JSONWriter.appendString(date.rfc3339String, into: &output)
        case .binary, .uuid, .json, .reference, .references: try writer.write(jsonValue, into: &output)
        }
    }
}
