import ContextBusSupport
import ContextBusWire

/// What a gateway answers to a command, on the command's `reply` subject, and what it remembers under its id:
///
/// ```
/// {"v":1,"id":"hub-9f2c41d07a3b5e16","gateway":"a","result":{"chain":"c-3","results":[…]}}
/// {"v":1,"id":"…","gateway":"a","error":{"code":-32602,"message":"…","data":{…}},"repeated":true}
/// ```
///
/// `result` or `error` is devicesvc's answer to the chain; `repeated` marks an answer from memory (the id was seen
/// before and nothing ran).
struct CommandOutcome: Sendable, Equatable {
    var id: String
    var gateway: String
    var answer: Result<JSONValue, RPCError>
    var isRepeated = false

    init(id: String, gateway: String, answer: Result<JSONValue, RPCError>, isRepeated: Bool = false) {
        self.id = id
        self.gateway = gateway
        self.answer = answer
        self.isRepeated = isRepeated
    }

    /// `nil` for anything that is not an outcome.
    init?(bytes: [UInt8]) {
        guard let root = (try? JSONParser().parse(bytes))?.objectValue, root["v"]?.intValue == 1,
            let id = root["id"]?.stringValue, let gateway = root["gateway"]?.stringValue
        else { return nil }
        if let result = root["result"] {
            answer = .success(result)
        } else if let error = root["error"].flatMap({ RPCError(json: $0) }) {
            answer = .failure(error)
        } else {
            return nil
        }
        self.id = id
        self.gateway = gateway
        isRepeated = root["repeated"]?.boolValue ?? false
    }

    var bytes: [UInt8] {
        var members: [String: JSONValue] = ["v": .int(1), "id": .string(id), "gateway": .string(gateway)]
        switch answer {
        case .success(let result): members["result"] = result
        case .failure(let error): members["error"] = error.json
        }
        if isRepeated { members["repeated"] = .bool(true) }
        return (try? JSONWriter().bytes(.object(members))) ?? []
    }
}
