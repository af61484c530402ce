/// What a store reads to resolve a save that comes from another gateway (`SaveOrigin`): besides the committed
/// objects, the replica tables the store keeps in the same database (docs/fleet.md, "State in the store").
package protocol ReplicaSource: ChangeSetSource {
    /// The highest transaction of `gateway` applied here (0 when none).
    func appliedTransaction(of gateway: String) throws -> Int64

    /// The local object that the fleet-wide ID stands for, alive or deleted, or `nil` when it was never seen here.
    func localID(forFleetID fleetID: String) throws -> ObjectID?

    /// The clock of the last write of each key of `id` that has one.
    func clocks(of id: ObjectID) throws -> [String: ReplicaClock]
}

/// A replicated save resolved into a plain one, with what the store records beside its changes.
package struct ResolvedReplicaSave: Sendable {
    /// The save to plan: objects named by local IDs, keys that lost to a later write left out, nothing that
    /// concerns a missing object. Its merge policy is `objectTrump`, without versions.
    package var request: SaveRequest
    /// IDs of the request (temporary for its inserts) → fleet-wide IDs to record.
    package var fleetIDs: [ObjectID: String]
    /// IDs of the request → the keys written under the origin's clock.
    package var clockedKeys: [ObjectID: Set<String>]
}

/// Turns a save with an origin into the plain save that applies it here, deterministically, so that every
/// gateway ends with the same values whatever order the gateways' transactions reach it in (docs/fleet.md,
/// "Conflicts"):
///
/// - A transaction of the origin at or below the one recorded for it changes nothing (`nil`).
/// - An insert whose fleet-wide ID is known stands for that object (a live one is updated like an update, a
///   deleted one stays deleted); one whose unique key (`uniqueBy`) a live object has becomes that object (the
///   keys merge, each by its clock) and its fleet-wide ID is recorded for it; any other is inserted.
/// - An update or delete of an object that does not exist here (deleted, or never seen) is dropped: a delete
///   wins over a concurrent update. An update keeps only the keys whose last write here is earlier than the
///   origin's commit (`ReplicaClock`: hybrid logical clock, then gateway name).
/// - A to-one value naming a missing object (deleted here) follows the delete rule that removed it, as it did on
///   every gateway where the value arrived before the delete: when the other side cascades (`Device.readings`),
///   the object goes too (an insert is not made, an update becomes a delete, and so on for what those reach in
///   turn); when it nullifies, the value is `null`; under `deny` it is left out. A to-many array drops missing
///   members.
package struct ReplicaResolver {
    package let model: Model
    package let source: any ReplicaSource

    package init(model: Model, source: any ReplicaSource) {
        self.model = model
        self.source = source
    }

    /// The plain save for `request` (which has `origin`), or `nil` when its transaction was applied before.
    package func resolve(_ request: SaveRequest, origin: SaveOrigin) throws -> ResolvedReplicaSave? {
        guard try source.appliedTransaction(of: origin.gateway) < origin.txn else { return nil }
        let clock = ReplicaClock(clock: origin.clock, gateway: origin.gateway)
        var resolved = ResolvedReplicaSave(
            request: SaveRequest(
                mergePolicy: .objectTrump, durability: request.durability, author: request.author,
                includesChangesInAnswer: request.includesChangesInAnswer),
            fleetIDs: [:], clockedKeys: [:])
        // Inserts that stand for an existing object (or for nothing: a deleted one).
        var aliases: [ObjectID: ObjectID?] = [:]
        var inserts: [SaveRequest.Insert] = []
        var updates: [SaveRequest.Update] = []
        for insert in request.inserts {
            let fleetID = origin.fleetIDs[insert.id]
            if let fleetID, let known = try source.localID(forFleetID: fleetID) {
                aliases[insert.id] = .some(try source.snapshot(of: known) == nil ? nil : known)
                if try source.snapshot(of: known) != nil {
                    updates.append(SaveRequest.Update(id: known, version: nil, values: insert.values))
                }
                continue
            }
            if let existing = try liveObject(withUniqueKeyOf: insert) {
                aliases[insert.id] = .some(existing)
                if let fleetID { resolved.fleetIDs[existing] = fleetID }
                updates.append(SaveRequest.Update(id: existing, version: nil, values: insert.values))
                continue
            }
            if let fleetID { resolved.fleetIDs[insert.id] = fleetID }
            inserts.append(insert)
        }
        var inserted = Set(inserts.map(\.id))
        func exists(_ id: ObjectID) throws -> Bool {
            id.isTemporary ? inserted.contains(id) : try source.snapshot(of: id) != nil
        }
        func target(of id: ObjectID) -> ObjectID? { aliases[id].map { $0 } ?? id }
        /// Whether a delete reaches an object with `values`: a to-one names a missing object whose side cascades.
        func isReachedByADelete(_ values: [String: PropertyValue], of entity: String) throws -> Bool {
            guard let description = model.entity(named: entity) else { return false }
            for (key, value) in values {
                guard case .reference(let id) = value, let relationship = description.relationship(named: key),
                    rule(forMissingTargetOf: relationship) == .cascade
                else { continue }
                guard let target = target(of: id), try exists(target) else { return true }
            }
            return false
        }
        // Inserts a delete reaches are not made; each one left out may reach others of the same save in turn.
        var reachedAny = true
        while reachedAny {
            reachedAny = false
            for insert in inserts where inserted.contains(insert.id) {
                guard try isReachedByADelete(insert.values, of: insert.id.entity) else { continue }
                inserted.remove(insert.id)
                aliases[insert.id] = .some(nil)
                reachedAny = true
            }
        }
        func resolvedValues(_ values: [String: PropertyValue], of entity: String) throws -> [String: PropertyValue] {
            guard let description = model.entity(named: entity) else { return values }
            var result: [String: PropertyValue] = [:]
            for (key, value) in values {
                guard let relationship = description.relationship(named: key) else {
                    result[key] = value
                    continue
                }
                switch value {
                case .reference(let id):
                    if let target = target(of: id), try exists(target) {
                        result[key] = .reference(target)
                    } else if rule(forMissingTargetOf: relationship) == .nullify {
                        result[key] = .null
                    }
                case .references(let ids):
                    var kept: [ObjectID] = []
                    for id in ids {
                        if let target = target(of: id), try exists(target) { kept.append(target) }
                    }
                    result[key] = .references(kept)
                default:
                    result[key] = value
                }
            }
            return result
        }
        for insert in inserts where inserted.contains(insert.id) {
            var insert = insert
            insert.values = try resolvedValues(insert.values, of: insert.id.entity)
            resolved.clockedKeys[insert.id] = Set(insert.values.keys)
            resolved.request.inserts.append(insert)
        }
        var deleted = Set<ObjectID>()
        for update in updates + request.updates {
            guard try source.snapshot(of: update.id) != nil, !deleted.contains(update.id) else { continue }
            let clocks = try source.clocks(of: update.id)
            var values: [String: PropertyValue] = [:]
            for (key, value) in update.values where clocks[key].map({ $0 < clock }) ?? true {
                values[key] = value
            }
            if try isReachedByADelete(values, of: update.id.entity) {
                // Where this update arrived before the delete, the delete's cascade took the object.
                resolved.request.updates.removeAll { $0.id == update.id }
                resolved.clockedKeys[update.id] = nil
                resolved.request.deletes.append(SaveRequest.Delete(id: update.id, version: nil))
                deleted.insert(update.id)
                continue
            }
            values = try resolvedValues(values, of: update.id.entity)
            guard !values.isEmpty else { continue }
            if let earlier = resolved.request.updates.firstIndex(where: { $0.id == update.id }) {
                resolved.request.updates[earlier].values.merge(values) { _, later in later }
            } else {
                resolved.request.updates.append(SaveRequest.Update(id: update.id, version: nil, values: values))
            }
            resolved.clockedKeys[update.id, default: []].formUnion(values.keys)
        }
        for delete in request.deletes where try source.snapshot(of: delete.id) != nil && !deleted.contains(delete.id) {
            resolved.request.deletes.append(SaveRequest.Delete(id: delete.id, version: nil))
        }
        return resolved
    }

    /// What a to-one value of `relationship` naming an object that no longer exists follows: the delete rule of
    /// the other side, which removed or changed the objects pointing at it where the value was there first.
    private func rule(forMissingTargetOf relationship: RelationshipDescription) -> DeleteRule {
        model.entity(named: relationship.destination)?.relationship(named: relationship.inverse)?.deleteRule ?? .deny
    }

    /// The live object that has one of `insert`'s unique keys, if any.
    private func liveObject(withUniqueKeyOf insert: SaveRequest.Insert) throws -> ObjectID? {
        guard let entity = model.entity(named: insert.id.entity) else { return nil }
        for keys in entity.uniqueBy {
            var key: [String: PropertyValue] = [:]
            for name in keys {
                guard let value = insert.values[name], value != .null,
                    !(value.referencedIDs.contains(where: \.isTemporary))
                else { break }
                key[name] = value
            }
            guard key.count == keys.count else { continue }
            if let id = try source.object(of: entity.name, withKey: key) { return id }
        }
        return nil
    }
}
