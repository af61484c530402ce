@testable import ContextBusSupport
@testable import ContextBusWire

/// Codable mirrors of wire shapes that tests encode and decode with Foundation's `JSONEncoder` /
/// `JSONDecoder`, to compare with what the hand-written writers produce.
enum FoundationWireMirrors {
    /// An object as `store.get`, `store.fetch` and `store.changed` carry it.
    struct Object: Codable {
        var id: String
        var version: Int64
        var values: [String: JSONValue]
    }

    /// `store.get`'s result.
    struct GetResult: Codable {
        var txn: Int64
        var objects: [Object]
        var missing: [String]
    }
}
