/// The type of an attribute, as named in a model file and in `store.model`.
public enum AttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    case string
    case int
    case double
    case bool
    case date
    case binary
    case uuid
    case json
}
