import BusProtocol
import Shared

/// The one place where store failures become protocol errors (`PROTOCOL.md`, "Error codes").
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
        switch storeError {
        case .invalidRequest(let field, let message):
            return .invalidParams(field: field, message: message)
        case .notFound(let id):
            return .notFound("\(id) does not exist", data: .object(["id": .string(id.description)]))
        case .conflict(let conflicts):
            return .conflict(
                conflicts.map { conflict in
                    SaveConflict(
                        id: conflict.id, version: conflict.version, currentVersion: conflict.currentVersion,
                        currentValues: conflict.currentVersion == nil
                            ? nil : conflict.currentValues.mapValues(\.jsonValue))
                })
        case .historyUnavailable(let since, let oldest):
            var error = RPCError.gone(since: since)
            error.data = .object(["since": .int(since), "oldest": .int(oldest)])
            error.message = "the history starts at transaction \(oldest); it no longer reaches back to \(since)"
            return error
        case .validation(let failures):
            return .validationFailed(
                failures.map { failure in
                    ValidationIssue(
                        id: failure.id.flatMap { $0.isTemporary ? nil : $0 },
                        ref: failure.id?.temporaryReference, key: failure.key, reason: failure.reason)
                })
        case .unavailable(let why):
            return .unavailable("the store is unavailable: \(why)")
        case .modelMismatch:
            log.error("\(storeError)")
            return .unavailable("the store is unavailable")
        }
    }
}
