import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// A subscription's set S: objects of one entity (or of every entity) matching a predicate; and
/// what a committed transaction changed in it.
///
/// Membership before and after the transaction decides how an object is reported
/// (`docs/protocol.md`, `store.subscribe`):
///
/// | before | after | reported as |
/// | --- | --- | --- |
/// | out (or not yet inserted) | in | `inserted`, all values |
/// | in | in, changed | `updated`, the changed keys |
/// | in | out (or deleted) | `deleted` |
/// | out | out | nothing |
///
/// "Before" for an updated object is its values after the commit with the changed keys put
/// back to `ChangeSet.Update.previousValues`. Key paths through relationships read the related
/// objects through `lookup` (the transaction's own objects first, then the store's committed
/// values), for both sides.
///
/// With `toMany` `.changes` (an addition to the design contract, in `docs/protocol.md`), an `updated` entry carries its changed to-many keys
/// as members added and removed (`toManyChanges`), never as whole arrays; `inserted` entries still carry all
/// values, whole arrays included (an object entering S needs its full state).
struct SubscriptionFilter: Sendable {
    /// What the filter was made from: subscriptions with equal keys see the same events, so `deliver` builds
    /// and encodes each transaction's event once per key.
    struct Key: Hashable, Sendable {
        var entity: String?
        var predicate: String?
        var arguments: [String: JSONValue]
        var toMany: SubscribeParams.ToMany
    }

    let key: Key
    /// The watched entity; `nil` watches every entity.
    let entity: String?
    /// The resolved predicate; `nil` matches every object of `entity`.
    let evaluator: PredicateEvaluator?
    /// How updated entries carry changed to-many keys.
    var toMany: SubscribeParams.ToMany { key.toMany }

    /// Whether the filter needs the whole to-many arrays of updated objects: to send them (`.values`), or to
    /// judge membership with its predicate, which may read them (a to-many key, `@count`, `ANY`), and to send
    /// all values of an object that enters S by an update.
    var needsToManyValues: Bool { toMany == .values || evaluator != nil }

    /// Reads and checks `entity`, `where` and `args` against `model`.
    ///
    /// - Throws: `-32602` naming `entity`, `where` (with `data.position` for a syntax error) or
    ///   `args`.
    init(
        entity: String?, predicate format: String?, arguments: [String: JSONValue],
        toMany: SubscribeParams.ToMany = .values,
        model: Model
    ) throws(RPCError) {
        if let entity, model.entity(named: entity) == nil {
            throw .invalidParams(field: "entity", message: "unknown entity '\(entity)'")
        }
        self.entity = entity
        key = Key(entity: entity, predicate: format, arguments: format == nil ? [:] : arguments, toMany: toMany)
        guard let predicate = try PredicateInput.predicate(format) else {
            evaluator = nil
            return
        }
        guard let entity else {
            throw .invalidParams(field: "where", message: "a predicate needs an 'entity' to be read against")
        }
        do {
            let bound = try predicate.binding(PredicateInput.arguments(arguments))
            evaluator = try PredicateEvaluator(bound, entity: entity, in: model)
        } catch {
            throw .invalidParams(field: "where", message: error.description)
        }
    }

    /// Whether an object with these values is in S.
    func contains(
        _ id: ObjectID, values: [String: PropertyValue], lookup: (ObjectID) -> [String: PropertyValue]?
    ) -> Bool {
        if let entity, id.entity != entity { return false }
        guard let evaluator else { return true }
        return evaluator.evaluate(values: values, lookup: lookup)
    }

    /// Whether any object of `changes` can concern S (its entity), before evaluating predicates.
    func mayConcern(_ changes: ChangeSet) -> Bool {
        guard let entity else { return !changes.isEmpty }
        return changes.inserted.contains { $0.id.entity == entity }
            || changes.updated.contains {
                $0.snapshot.id.entity == entity
            } || changes.deleted.contains { $0.id.entity == entity }
    }

    /// The `store.changed` event `changes` makes for subscription `subscription`, or `nil` when
    /// the transaction changed nothing in S.
    ///
    /// With `toMany` `.changes`, `toManyChanges` gives each updated object's changed to-many keys
    /// (`ChangeSet.toManyChanges(model:)` of the transaction as committed); it is not called otherwise.
    func event(
        for changes: ChangeSet, subscription: Int64, lookup: (ObjectID) -> [String: PropertyValue]?,
        toManyChanges: () -> [ObjectID: [String: ToManyChange]] = { [:] }
    ) -> ChangedEvent? {
        guard mayConcern(changes) else { return nil }
        var inserted: [StoreObject] = []
        var updated: [StoreObject] = []
        var deleted: [ObjectID] = []
        for snapshot in changes.inserted where contains(snapshot.id, values: snapshot.values, lookup: lookup) {
            inserted.append(Self.object(snapshot.id, snapshot.version, snapshot.values))
        }
        for update in changes.updated {
            let snapshot = update.snapshot
            if let entity, snapshot.id.entity != entity { continue }
            let isIn = contains(snapshot.id, values: snapshot.values, lookup: lookup)
            var before = snapshot.values
            for (key, value) in update.previousValues { before[key] = value }
            let wasIn = contains(snapshot.id, values: before, lookup: lookup)
            switch (wasIn, isIn) {
            case (false, true):
                inserted.append(Self.object(snapshot.id, snapshot.version, snapshot.values))
            case (true, true):
                updated.append(updatedObject(update, toManyChanges: toManyChanges))
            case (true, false):
                deleted.append(snapshot.id)
            case (false, false):
                continue
            }
        }
        for snapshot in changes.deleted where contains(snapshot.id, values: snapshot.values, lookup: lookup) {
            deleted.append(snapshot.id)
        }
        guard !(inserted.isEmpty && updated.isEmpty && deleted.isEmpty) else { return nil }
        return ChangedEvent(
            subscription: subscription, txn: changes.txn, author: changes.author, inserted: inserted,
            updated: updated, deleted: deleted)
    }

    /// An `updated` entry: the changed keys' values; with `toMany` `.changes`, changed to-many keys as members
    /// added and removed instead.
    private func updatedObject(
        _ update: ChangeSet.Update, toManyChanges: () -> [ObjectID: [String: ToManyChange]]
    ) -> StoreObject {
        let snapshot = update.snapshot
        guard toMany == .changes else {
            var changed: [String: PropertyValue] = [:]
            for key in update.changedKeys { changed[key] = snapshot.values[key] ?? .null }
            return Self.object(snapshot.id, snapshot.version, changed)
        }
        let changes = toManyChanges()[snapshot.id] ?? [:]
        var values: [String: JSONValue] = [:]
        var members: [String: ToManyChange] = [:]
        for key in update.changedKeys {
            if let change = changes[key] {
                members[key] = change
            } else {
                values[key] = (snapshot.values[key] ?? .null).jsonValue
            }
        }
        return StoreObject(id: snapshot.id, version: snapshot.version, values: values, toManyChanges: members)
    }

    private static func object(_ id: ObjectID, _ version: Int64, _ values: [String: PropertyValue]) -> StoreObject {
        StoreObject(id: id, version: version, values: values.mapValues(\.jsonValue))
    }
}
