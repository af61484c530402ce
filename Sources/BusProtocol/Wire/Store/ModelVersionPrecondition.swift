import ContextBusObjectGraph
import ContextBusSupport

/// A store request made for a model: `"model":"<version hash>"` in any `store.*` request's params (an addition
/// to PROTOCOL.md, docs/protocol.md "Model changes (migration)"). A client that read the model (`store.model`, or
/// at `RemoteStore.open`) sends its hash, so that after a migration it gets a clear `412` instead of answers and
/// events under names it does not know; a request without it is served as before.
public struct ModelVersionPrecondition: Sendable, Hashable {
    /// The member of a request's params that names the model.
    public static let field = "model"

    /// The served model's version hash.
    public let served: String
    /// The models the served database was made with before, oldest first.
    public let previousVersions: [String]

    public init(model: Model, previousVersions: [String]) {
        served = model.versionHash
        self.previousVersions = previousVersions
    }

    /// `412` for a `store.*` request (but `store.model`, which is how a client reads the model again) whose params
    /// name another model; `nil` to serve it. A `model` member that is not a string is left to the method's own
    /// params (ignored, as unknown members are).
    public func refusal(method: String, params: JSONValue?) -> RPCError? {
        guard method.hasPrefix("store."), method != StoreModel.name,
            case .string(let requested)? = params?[Self.field], requested != served
        else { return nil }
        return .modelChanged(requested: requested, served: served, previousVersions: previousVersions)
    }

    /// `params` with the model named (an object's members kept; anything else left as it is).
    public static func naming(_ version: String, in params: JSONValue?) -> JSONValue? {
        switch params {
        case nil: return .object([field: .string(version)])
        case .object(var members)?:
            members[field] = .string(version)
            return .object(members)
        default: return params
        }
    }
}
