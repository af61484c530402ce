import ContextBusObjectGraph
import ContextBusSupport

// Store errors on the wire, both ways (`docs/protocol.md`, "Error codes"):
//
// | StoreError | RPC error |
// | --- | --- |
// | `invalidRequest(field:)` | -32602, `data.field` |
// | `notFound(id)` | 404, `data.id` |
// | `conflict` | 409, `data.conflicts` `[{id, version, currentVersion, currentValues}]` |
// | `historyUnavailable` | 410, `data.since`, `data.oldest` |
// | `validation` | 422, `data.errors` `[{id?, ref?, key, reason}]` |
// | `unavailable` | 503 |
// | `modelMismatch`, `migrationRefused` | 503 without detail (the service logs it) |
// | `modelChanged` | 412, `data.requested`, `data.model` |

extension RPCError {
    /// The protocol error for a store error.
    package init(_ error: StoreError) {
        switch error {
        case .invalidRequest(let field, let message):
            self = .invalidParams(field: field, message: message)
        case .notFound(let id):
            self = .notFound("\(id) does not exist", data: .object(["id": .string(id.description)]))
        case .conflict(let conflicts):
            self = .conflict(
                conflicts.map { conflict in
                    func name(_ id: ObjectID) -> String { id.temporaryReference ?? id.description }
                    if let other = conflict.conflictsWith {
                        return SaveConflict(
                            id: conflict.id.isTemporary ? nil : conflict.id, version: nil, currentVersion: nil,
                            currentValues: nil, ref: conflict.id.temporaryReference,
                            key: conflict.uniqueKey?.mapValues(\.jsonValue), conflictsWith: name(other))
                    }
                    return SaveConflict(
                        id: conflict.id, version: conflict.version, currentVersion: conflict.currentVersion,
                        currentValues: conflict.currentVersion == nil
                            ? nil : conflict.currentValues.mapValues(\.jsonValue),
                        ref: conflict.insert?.temporaryReference, key: conflict.uniqueKey?.mapValues(\.jsonValue))
                })
        case .historyUnavailable(let since, let oldest):
            var gone = RPCError.gone(since: since)
            gone.data = .object(["since": .int(since), "oldest": .int(oldest)])
            gone.message = "the history starts at transaction \(oldest); it no longer reaches back to \(since)"
            self = gone
        case .validation(let failures):
            self = .validationFailed(
                failures.map { failure in
                    ValidationIssue(
                        id: failure.id.flatMap { $0.isTemporary ? nil : $0 },
                        ref: failure.id?.temporaryReference, key: failure.key, reason: failure.reason)
                })
        case .unavailable(let why):
            self = .unavailable("the store is unavailable: \(why)")
        case .modelMismatch, .migrationRefused:
            self = .unavailable("the store is unavailable")
        case .modelChanged(let requested, let served):
            self = .modelChanged(requested: requested, served: served, previousVersions: [])
        }
    }
}

extension StoreError {
    /// The store error a service's answer stands for, values typed with `model`; `service` names the service
    /// (its socket) in errors that have no better home.
    ///
    /// Conflicts and validation failures keep their per-object details; inserts named by `ref` come back as
    /// temporary IDs with that reference (the IDs the request was made with). Codes that are not store errors
    /// (`-32603`, `429`, `499`, …) become `unavailable` with the service's message.
    package init(_ error: RPCError, model: Model, service: String) {
        let data = error.data
        switch error.code {
        case .invalidParams:
            self = .invalidRequest(field: error.field ?? "params", message: Self.detail(of: error))
        case .notFound:
            if let text = data?["id"]?.stringValue, let id = ObjectID(string: text) {
                self = .notFound(id)
            } else {
                self = .unavailable("\(service): \(error.message)")
            }
        case .conflict:
            self = .conflict(Self.conflicts(in: data, model: model))
        case .gone:
            self = .historyUnavailable(
                since: data?["since"]?.intValue ?? 0, oldest: data?["oldest"]?.intValue ?? 0)
        case .validationFailed:
            self = .validation(Self.failures(in: data))
        case .modelChanged:
            self = .modelChanged(
                requested: data?["requested"]?.stringValue ?? "", served: data?["model"]?.stringValue ?? "")
        default:
            self = .unavailable("\(service) answered \(error)")
        }
    }

    /// `-32602`'s message without the `invalid params: <field>:` prefix the constructor adds (the
    /// `StoreError` description adds its own).
    private static func detail(of error: RPCError) -> String {
        guard let field = error.field else { return error.message }
        for prefix in ["invalid params: \(field): ", "invalid params: "] where error.message.hasPrefix(prefix) {
            return String(error.message.dropFirst(prefix.count))
        }
        return error.message
    }

    private static func conflicts(in data: JSONValue?, model: Model) -> [Conflict] {
        guard case .array(let items)? = data?["conflicts"] else { return [] }
        return items.compactMap { item -> Conflict? in
            guard let wire = try? SaveConflict(json: item) else { return nil }
            // An insert of the request is named by its ref; its entity is not on the wire.
            func named(_ text: String) -> ObjectID {
                ObjectID(string: text) ?? ObjectID(entity: "", temporaryReference: text)
            }
            let id = wire.id ?? wire.ref.map(named) ?? ObjectID(entity: "", temporaryReference: "")
            let key = wire.key.flatMap { try? model.typedValues($0, of: id.entity, path: "key") }
            if let other = wire.conflictsWith {
                return Conflict(id: id, uniqueKey: key ?? [:], conflictsWith: named(other))
            }
            let values = wire.currentValues.flatMap {
                try? model.typedValues($0, of: id.entity, path: "currentValues")
            }
            return Conflict(
                id: id, version: wire.version, currentVersion: wire.currentVersion, currentValues: values ?? [:],
                insert: wire.ref.map(named), uniqueKey: key)
        }
    }

    private static func failures(in data: JSONValue?) -> [ValidationFailure] {
        guard case .array(let items)? = data?["errors"] else { return [] }
        return items.compactMap { item -> ValidationFailure? in
            guard let issue = try? ValidationIssue(json: item) else { return nil }
            let id: ObjectID? =
                issue.id
                ?? issue.ref.map { ref in
                    // The entity of an insert is not on the wire; the reference is what names it.
                    ObjectID(entity: "", temporaryReference: ref)
                }
            return ValidationFailure(id: id, key: issue.key, reason: issue.reason)
        }
    }
}
