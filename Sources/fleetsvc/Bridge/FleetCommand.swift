import ContextBusSupport
import ContextBusWire

/// A command for one gateway's devicesvc, as it travels on `ctxbus.<fleet>.<gateway>.commands` (docs/fleet.md,
/// "Commands"):
///
/// ```
/// {"v":1,"id":"hub-9f2c41d07a3b5e16","from":"hub","reply":"_INBOX.…",
///  "request":{"address":"AA:BB:CC:DD:EE:01","steps":[{"op":"connect"},{"op":"read","characteristic":"2a19"}]}}
/// ```
///
/// `request` is `device.run`'s params, handed to devicesvc as they are (it judges the chain); `reply` is where the
/// outcome (`CommandOutcome`) is published, if anywhere; `from` names the sender, for the logs.
struct FleetCommand: Sendable, Equatable {
    var id: String
    var from: String?
    var reply: String?
    var request: JSONValue

    enum DecodingError: Error, CustomStringConvertible {
        case malformed(String)
        var description: String {
            switch self {
            case .malformed(let why): return "malformed command: \(why)"
            }
        }
    }

    init(id: String, from: String?, reply: String?, request: JSONValue) {
        self.id = id
        self.from = from
        self.reply = reply
        self.request = request
    }

    /// Reads a command; anything else (not JSON, another version, an id that is not 1 to 128 letters, digits,
    /// `-` or `_`, a `request` that is not an object) throws.
    init(bytes: [UInt8]) throws {
        let json: JSONValue
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw DecodingError.malformed("not JSON (\(error))")
        }
        guard let root = json.objectValue else { throw DecodingError.malformed("not an object") }
        guard root["v"]?.intValue == 1 else { throw DecodingError.malformed("unknown version") }
        guard let id = root["id"]?.stringValue, FleetRunParams.isValidCommandID(id) else {
            throw DecodingError.malformed("id missing, or not 1 to 128 letters, digits, '-' or '_'")
        }
        guard let request = root["request"], request.objectValue != nil else {
            throw DecodingError.malformed("request missing or not an object")
        }
        self.init(id: id, from: root["from"]?.stringValue, reply: root["reply"]?.stringValue, request: request)
    }

    var bytes: [UInt8] {
        var members: [String: JSONValue] = ["v": .int(1), "id": .string(id), "request": request]
        if let from { members["from"] = .string(from) }
        if let reply { members["reply"] = .string(reply) }
        return (try? JSONWriter().bytes(.object(members))) ?? []
    }
}
