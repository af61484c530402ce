import ContextBusObjectGraph
import ContextBusServer
import ContextBusWire

/// The one place where store failures become protocol errors (`docs/protocol.md`, "Error codes"); the
/// table itself is `RPCError.init(_: StoreError)` in BusProtocol, shared with `RemoteStore`.
///
/// | store error | RPC error |
/// | --- | --- |
/// | `invalidRequest(field:)` | -32602, `data.field` |
/// | `notFound(id)` | 404, `data.id` |
/// | `conflict` | 409, `data.conflicts` `[{id, version, currentVersion, currentValues}]` |
/// | `historyUnavailable` | 410, `data.since`, `data.oldest` |
/// | `validation` | 422, `data.errors` `[{id?, ref?, key, reason}]` |
/// | `unavailable` (closed while stopping) | 503 |
/// | anything else (SQLite, I/O) | -32603 with no detail; the detail is logged |
enum StoreErrorMapping {
    static func rpcError(for error: any Error, log: ServiceLog) -> RPCError {
        if let rpc = error as? RPCError { return rpc }
        guard let storeError = error as? StoreError else {
            log.error("internal error: \(error)")
            return .internalError()
        }
        if case .modelMismatch = storeError { log.error("\(storeError)") }
        return RPCError(storeError)
    }
}
