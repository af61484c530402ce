import ContextBusSupport
import ContextBusWire

/// One transaction of a gateway, as it travels on `ctxbus.<fleet>.<gateway>.txn` (docs/fleet.md, "Messages"):
///
/// ```
/// {"v":1,"gateway":"a","txn":17,"prev":12,"clock":1732790000123456,"time":"…","author":"app",
///  "inserted":[{"id":"a:Device/3","entity":"Device","values":{"address":"AA:…","name":"x"}}],
///  "updated":[{"id":"b:Reading/9","values":{"device":"a:Device/3"}}],
///  "deleted":["a:Reading/4"]}
/// ```
///
/// Objects are named by fleet-wide IDs (`<gateway that inserted it>:<Entity>/<n>`); attribute values are in the
/// protocol's JSON form; to-one relationships are fleet-wide IDs; to-many relationships are not sent (the to-one
/// side of each pair carries them). The NATS message ID (`Nats-Msg-Id`) is `<gateway>:<txn>`.
struct FleetMessage: Sendable, Equatable {
    struct Object: Sendable, Equatable {
        var id: String
        var entity: String
        var values: [String: JSONValue]
    }

    var gateway: String
    var txn: Int64
    /// The gateway's previous published transaction, when the publisher knows it (0: unknown, after a restart).
    var previous: Int64
    var clock: Int64
    var author: String?
    var inserted: [Object]
    var updated: [Object]
    var deleted: [String]

    var messageID: String { "\(gateway):\(txn)" }

    enum DecodingError: Error, CustomStringConvertible {
        case malformed(String)
        var description: String {
            switch self {
            case .malformed(let why): return "malformed fleet message: \(why)"
            }
        }
    }

    var json: JSONValue {
        func object(_ object: Object, withEntity: Bool) -> JSONValue {
            var members: [String: JSONValue] = ["id": .string(object.id), "values": .object(object.values)]
            if withEntity { members["entity"] = .string(object.entity) }
            return .object(members)
        }
        var members: [String: JSONValue] = [
            "v": .int(1), "gateway": .string(gateway), "txn": .int(txn), "clock": .int(clock),
            "inserted": .array(inserted.map { object($0, withEntity: true) }),
            "updated": .array(updated.map { object($0, withEntity: false) }),
            "deleted": .array(deleted.map(JSONValue.string)),
        ]
        if previous > 0 { members["prev"] = .int(previous) }
        if let author { members["author"] = .string(author) }
        return .object(members)
    }

    var bytes: [UInt8] { (try? JSONWriter().bytes(json)) ?? [] }

    init(
        gateway: String, txn: Int64, previous: Int64, clock: Int64, author: String?, inserted: [Object],
        updated: [Object], deleted: [String]
    ) {
        self.gateway = gateway
        self.txn = txn
        self.previous = previous
        self.clock = clock
        self.author = author
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// Reads a message; anything that is not one (not JSON, another version, a missing or mistyped member, an ID
    /// that is not `<gateway>:<Entity>/<n>`) throws.
    init(bytes: [UInt8]) throws {
        let json: JSONValue
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw DecodingError.malformed("not JSON (\(error))")
        }
        guard let root = json.objectValue else { throw DecodingError.malformed("not an object") }
        guard root["v"]?.intValue == 1 else { throw DecodingError.malformed("unknown version") }
        guard let gateway = root["gateway"]?.stringValue, ReplicaParams.isValidGatewayName(gateway),
            let txn = root["txn"]?.intValue, txn > 0, let clock = root["clock"]?.intValue
        else { throw DecodingError.malformed("gateway, txn or clock missing") }
        func objects(_ key: String, needsEntity: Bool) throws -> [Object] {
            guard let items = root[key]?.arrayValue else { throw DecodingError.malformed("\(key) missing") }
            return try items.map { item in
                guard let members = item.objectValue, let id = members["id"]?.stringValue,
                    let local = Self.localPart(of: id), let values = members["values"]?.objectValue
                else { throw DecodingError.malformed("an entry of \(key)") }
                let entity = members["entity"]?.stringValue ?? local.entity
                guard entity == local.entity else { throw DecodingError.malformed("an entry of \(key)") }
                return Object(id: id, entity: entity, values: values)
            }
        }
        guard let deleted = root["deleted"]?.arrayValue?.compactMap(\.stringValue),
            deleted.allSatisfy({ Self.localPart(of: $0) != nil })
        else { throw DecodingError.malformed("deleted") }
        self.init(
            gateway: gateway, txn: txn, previous: root["prev"]?.intValue ?? 0, clock: clock,
            author: root["author"]?.stringValue, inserted: try objects("inserted", needsEntity: true),
            updated: try objects("updated", needsEntity: false), deleted: deleted)
    }

    /// `"a:Device/3"` → `("a", "Device", "Device/3")`.
    static func localPart(of fleetID: String) -> (gateway: String, entity: String, id: String)? {
        guard let colon = fleetID.firstIndex(of: ":") else { return nil }
        let gateway = String(fleetID[..<colon])
        let id = String(fleetID[fleetID.index(after: colon)...])
        guard !gateway.isEmpty, let slash = id.firstIndex(of: "/"), Int64(id[id.index(after: slash)...]) != nil else {
            return nil
        }
        return (gateway, String(id[..<slash]), id)
    }
}
