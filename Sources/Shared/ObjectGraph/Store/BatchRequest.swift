/// Every object of one entity that a predicate matches, changed in one transaction: Core Data's
/// `NSBatchUpdateRequest` and `NSBatchDeleteRequest`, but not invisible. Each changed or deleted object appears in
/// the change set, the history and every subscriber's events exactly as a save of those objects would show it
/// (docs/protocol.md, "store.batch").
///
/// ```swift
/// let old = try ObjectPredicate(format: "time < $cutoff")
/// let result = try store.batch(BatchRequest(entity: "Reading", where: old, arguments: ["cutoff": .date(cutoff)], action: .delete))
/// ```
public struct BatchRequest: Sendable, Hashable {
    /// What happens to each matching object.
    public enum Action: Sendable, Hashable {
        /// These values are written over each object (validated like an update's; relationships keep their
        /// inverses).
        case set([String: PropertyValue])
        /// Each object is deleted, its relationships' delete rules applied (a `deny` that blocks any object fails
        /// the whole batch).
        case delete
    }

    public var entity: String
    /// Which objects; `nil` is every object of the entity.
    public var predicate: ObjectPredicate?
    /// Values for the predicate's `$variables`.
    public var arguments: [String: PropertyValue]
    public var action: Action
    public var durability: Durability
    public var author: String?

    public init(
        entity: String, where predicate: ObjectPredicate? = nil, arguments: [String: PropertyValue] = [:],
        action: Action, durability: Durability = .disk, author: String? = nil
    ) {
        self.entity = entity
        self.predicate = predicate
        self.arguments = arguments
        self.action = action
        self.durability = durability
        self.author = author
    }
}
