/// Why a predicate cannot be bound, checked against a model, evaluated or compiled.
///
/// Key paths are written dotted (`device.name`). Every case reads as a one-line `description`
/// suitable for an RPC error message.
public enum ObjectPredicateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entity the predicate is evaluated against is not in the model.
    case unknownEntity(String)
    /// `key` is neither an attribute nor a relationship of `entity` (reached along `keyPath`).
    case unknownKey(keyPath: String, entity: String, key: String)
    /// The key path continues past `key`, which is an attribute, not a relationship.
    case notARelationship(keyPath: String, key: String)
    /// `ANY`/`ALL` on a key path that crosses no to-many relationship.
    case quantifierWithoutToMany(keyPath: String)
    /// `@count` on something other than a to-many relationship.
    case countOfNonToMany(keyPath: String)
    /// Both sides of one comparison are key paths through to-many relationships.
    case twoCollections(lhs: String, rhs: String)
    /// The value compared with `keyPath` can never match it (a string attribute against a number).
    case typeMismatch(keyPath: String, expected: String, value: String)
    /// A string that should spell a value of the key path's type does not (a bad date, UUID, base64, ID).
    case invalidLiteral(keyPath: String, expected: String, value: String)
    /// The operator does not apply to the key path's type (`<` on a relationship, `LIKE` on a number).
    case unsupportedOperator(keyPath: String, operator: String, type: String)
    /// `IN` / `BETWEEN` without a list, `BETWEEN` without exactly two values, a key path inside a list,
    /// or a list where a single value belongs.
    case invalidList(operator: String, reason: String)
    /// `MATCHES` with a pattern `NSRegularExpression` rejects.
    case invalidRegularExpression(pattern: String)
    /// `$name` has no value in the arguments.
    case unboundVariable(String)
    /// An argument value that cannot stand in a predicate (nested JSON arrays or objects).
    case invalidArgument(variable: String, reason: String)
    /// The predicate nests deeper than `ObjectPredicate.maximumNestingDepth`.
    case nestingTooDeep(limit: Int)

    public var description: String {
        switch self {
        case .unknownEntity(let e): return "predicate: unknown entity '\(e)'"
        case .unknownKey(let path, let entity, let key):
            return "predicate: '\(path)': \(entity) has no attribute or relationship '\(key)'"
        case .notARelationship(let path, let key):
            return "predicate: '\(path)': '\(key)' is an attribute, not a relationship, so the key path cannot continue"
        case .quantifierWithoutToMany(let path):
            return "predicate: ANY/ALL needs a key path through a to-many relationship; '\(path)' has none"
        case .countOfNonToMany(let path): return "predicate: '\(path).@count': @count needs a to-many relationship"
        case .twoCollections(let l, let r):
            return "predicate: '\(l)' and '\(r)' both go through to-many relationships; compare one at a time"
        case .typeMismatch(let path, let expected, let value):
            return "predicate: '\(path)' is \(expected) and can never match \(value)"
        case .invalidLiteral(let path, let expected, let value):
            return "predicate: '\(path)' is \(expected), and \(value) does not spell one"
        case .unsupportedOperator(let path, let op, let type):
            return "predicate: \(op) does not apply to '\(path)', which is \(type)"
        case .invalidList(let op, let reason): return "predicate: \(op): \(reason)"
        case .invalidRegularExpression(let pattern):
            return "predicate: MATCHES pattern '\(pattern)' is not a valid regular expression"
        case .unboundVariable(let name): return "predicate: variable '$\(name)' has no value in args"
        case .invalidArgument(let name, let reason): return "predicate: argument '\(name)': \(reason)"
        case .nestingTooDeep(let limit): return "predicate: nests deeper than \(limit) levels"
        }
    }
}
