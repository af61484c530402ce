/// What to do when an update's or delete's version is not the current one (`docs/protocol.md`).
public enum MergePolicy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The whole save fails with a conflict error.
    case error
    /// The changed values are written over the current object; other keys keep the store's values.
    case objectTrump
    /// For each changed key whose current value differs from `original`, the store's value is kept.
    case storeTrump
    /// Like `objectTrump`, for clients that send every key.
    case overwrite
    /// The conflicting objects' changes are dropped; the rest commits.
    case rollback
}
