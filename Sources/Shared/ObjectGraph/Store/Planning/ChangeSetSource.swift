import Foundation

/// What `ChangeSetPlanner` reads while planning a save: the committed state as the store's writer
/// sees it (including earlier change sets of the same group commit), and its ID counters.
///
/// Implemented by each store over its own storage; called only from the thread that plans.
package protocol ChangeSetSource: AnyObject {
    /// The current version, attributes and to-one values (`.reference`/`.null`) of the object
    /// `id`, or `nil` when it does not exist. To-many relationships are left out: they are read
    /// with `members(of:relationship:)` only when a save needs them in full.
    func snapshot(of id: ObjectID) throws -> ObjectSnapshot?

    /// The committed members of the to-many `relationship` of the existing object `id`.
    func members(of id: ObjectID, relationship: RelationshipDescription) throws -> [ObjectID]

    /// Reserves `count` new, never used numbers for objects of `entity`; returns the first.
    func allocateNumbers(entity: String, count: Int) throws -> Int64

    /// The highest number handed out for `entity` so far (0 when none).
    func highestAllocatedNumber(entity: String) throws -> Int64

    /// The live object of `entity` whose values for the keys of `key` (one of its `uniqueBy` sets, none `null`)
    /// are those values, or `nil`.
    func object(of entity: String, withKey key: [String: PropertyValue]) throws -> ObjectID?

    /// The committed snapshots (attributes and to-one relationships) of the live objects of `entity` that
    /// `predicate` (bound and validated; `nil`: every object) matches, in ID order: a batch's objects read in one
    /// query rather than one by one as its save loads them.
    func objects(of entity: String, matching predicate: ObjectPredicate?) throws -> [ObjectSnapshot]
}

/// A validated save, resolved into what to write: the objects as they will be after the commit.
package struct SavePlan: Sendable {
    /// Each insert's ID in the request → its permanent ID.
    package var ids: [ObjectID: ObjectID] = [:]
    /// New objects with all their values, version 1, in request order.
    package var inserted: [ObjectSnapshot] = []
    /// Changed objects (including the other side of changed relationships) at their new version.
    package var updated: [ChangeSet.Update] = []
    /// Deleted objects with their last committed values, cascades after the object that caused them.
    package var deleted: [ObjectSnapshot] = []
    /// Updated object → to-many relationship → members added and removed (the stores write
    /// join-table rows and in-memory sets from these, never from whole sets).
    package var toManyDeltas: [ObjectID: [String: ToManyDelta]] = [:]

    /// For a batch: how many objects it matched.
    package var matched: Int?
    /// For a batch delete planned without a working object per deleted object (`ChangeSetPlanner+Batch.swift`):
    /// the entity and predicate whose matching objects `deleted` holds, so that a SQL store deletes them with one
    /// `DELETE … WHERE` in the transaction that read them.
    package var bulkDelete: BulkDelete?

    /// For a batch `set` planned as one set: the values (checked) written to every object of `updated`, so that a
    /// SQL store writes them with one `UPDATE`.
    package var bulkUpdate: BulkUpdate?

    /// The objects of `entity` matching `predicate` (bound and checked; every object without one).
    package struct BulkDelete: Sendable {
        package let entity: String
        package let predicate: ObjectPredicate?
    }

    /// `values` (attributes) set on the objects of `entity` in `updated`, each one's version raised by one.
    package struct BulkUpdate: Sendable {
        package let entity: String
        package let values: [(key: String, value: PropertyValue)]
    }

    /// Whether committing the plan would change nothing.
    package var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// The new version of every inserted or updated object.
    package var versions: [ObjectID: Int64] {
        var versions: [ObjectID: Int64] = [:]
        versions.reserveCapacity(inserted.count + updated.count)
        for snapshot in inserted { versions[snapshot.id] = snapshot.version }
        for update in updated { versions[update.snapshot.id] = update.snapshot.version }
        return versions
    }

    /// The change set subscribers see for this plan committed as `txn`.
    package func changeSet(txn: Int64, time: Date, author: String?) -> ChangeSet {
        ChangeSet(txn: txn, time: time, author: author, inserted: inserted, updated: updated, deleted: deleted)
    }

    /// The save's answer for this plan committed as `txn`.
    package func result(txn: Int64, time: Date, author: String?) -> SaveResult {
        var result = SaveResult(
            txn: txn, ids: ids, versions: versions, changes: changeSet(txn: txn, time: time, author: author))
        result.matched = matched
        return result
    }
}
