import ContextBusObjectGraph

/// Why `EntityCodeGenerator` wrote nothing; every case names the file, and the entity and key when there is one.
public enum EntityCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The model file could not be read.
    case unreadableFile(path: String, reason: String)
    /// The file is not a valid model (`ModelError` names the entity and key at fault).
    case invalidModel(path: String, ModelError)
    /// A valid model whose entity or key (`nil`: the entity's own name) the generated Swift cannot declare.
    case unusableName(entity: String, key: String?, reason: String)

    public var description: String {
        switch self {
        case .unreadableFile(let path, let reason): return "\(path): cannot be read: \(reason)"
        case .invalidModel(let path, let error): return "\(path): \(error)"
        case .unusableName(let entity, let key?, let reason):
            return "model: \(entity).\(key) cannot be generated: \(reason); rename it"
        case .unusableName(let entity, nil, let reason):
            return "model: entity \(entity) cannot be generated: \(reason); rename it"
        }
    }
}
