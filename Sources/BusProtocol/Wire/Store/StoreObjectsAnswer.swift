public import ContextBusObjectGraph
public import ContextBusSupport

/// `store.get`'s result (`GetResult`) written straight from the store's snapshots: the same JSON as
/// `GetResult(result).json`, without the intermediate `StoreObject`s and `JSONValue` dictionaries.
///
/// ```swift
/// responder.succeed(writing: StoreObjectsAnswer(try store.objects(with: ids)))
/// ```
public struct StoreObjectsAnswer: JSONWritable {
    public var result: StoreObjectsResult

    public init(_ result: StoreObjectsResult) {
        self.result = result
    }

    public func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"txn":"#, into: &output)
        JSONWriter.appendInteger(result.txn, into: &output)
        JSONWriter.appendLiteral(#","objects":["#, into: &output)
        for (index, object) in result.objects.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            try object.writeJSON(into: &output, writer: writer)
        }
        JSONWriter.appendLiteral(#"],"missing":["#, into: &output)
        for (index, id) in result.missing.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(id.description, into: &output)
        }
        JSONWriter.appendLiteral("]}", into: &output)
    }
}

extension ObjectSnapshot {
    /// `{"id":…,"version":…,"values":{…}}`: `StoreObject(self).json` as text.
    func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError) {
        JSONWriter.appendLiteral(#"{"id":"#, into: &output)
        JSONWriter.appendString(id.description, into: &output)
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
