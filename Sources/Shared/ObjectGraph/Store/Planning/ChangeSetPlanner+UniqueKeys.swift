/// Unique keys (`EntityDescription.uniqueBy`): inserts that find their key taken become the existing object
/// (an upsert, or find-or-create, by merge policy), and no save leaves two live objects with one key
/// (docs/protocol.md, "Unique constraints and upsert").
///
/// An insert's key is its values for one `uniqueBy` set (defaults for the keys it leaves out, relationship values
/// as IDs); a key with a `null` never collides, as in SQL. Before planning, each such insert is matched against
/// the earlier inserts of the same save and then the live objects (`ChangeSetSource.object(of:withKey:)`):
///
/// | merge policy | the insert, when its key is taken |
/// | --- | --- |
/// | `error` | the save fails with `.conflict` (`insert`, `uniqueKey`, the current object) |
/// | `objectTrump`, `overwrite` | becomes an update of that object with the insert's values (keys it leaves out keep theirs) |
/// | `storeTrump`, `rollback` | is dropped: that object is kept as it is (find-or-create) |
///
/// Either way the insert's ID stands for that object: in relationship values of the same save, and in the plan's
/// `ids`. After planning, every inserted or updated object's keys are checked against the other objects of the save
/// and the live ones: a collision fails the save with `.conflict` (`conflictsWith`) under every policy.
extension ChangeSetPlanner {
    /// `request` with its inserts whose keys are taken resolved by `request.mergePolicy`, and the insert IDs that
    /// now stand for another object (an existing one, or an earlier insert of the save).
    ///
    /// - Throws: `.conflict` under policy `error`.
    mutating func resolvingUniqueKeys(of request: SaveRequest) throws -> (SaveRequest, aliases: [ObjectID: ObjectID]) {
        guard request.inserts.contains(where: { !(model.entity(named: $0.id.entity)?.uniqueBy.isEmpty ?? true) })
        else { return (request, [:]) }
        var aliases: [ObjectID: ObjectID] = [:]
        var kept: [SaveRequest.Insert] = []
        var upserts: [SaveRequest.Update] = []
        var keysOfKept: [UniqueKey: Int] = [:]  // key → position in `kept`
        var conflicts: [StoreError.Conflict] = []
        let deleted = Set(request.deletes.map(\.id))
        for (position, insert) in request.inserts.enumerated() {
            guard let entity = model.entity(named: insert.id.entity), !entity.uniqueBy.isEmpty else {
                kept.append(insert)
                continue
            }
            let keys = entity.uniqueBy.compactMap { uniqueKey($0, of: entity, values: insert.values, aliases: aliases) }
            if let earlier = keys.lazy.compactMap({ keysOfKept[$0] }).first {
                // Another insert of this save has the key: the same object.
                let target = kept[earlier].id
                aliases[insert.id] = target
                switch request.mergePolicy {
                case .error:
                    conflicts.append(
                        .init(
                            id: insert.id, uniqueKey: keys.first { keysOfKept[$0] == earlier }?.values ?? [:],
                            conflictsWith: target))
                case .objectTrump, .overwrite:
                    kept[earlier].values.merge(insert.values) { _, later in later }
                case .storeTrump, .rollback:
                    break
                }
                continue
            }
            var existing: (id: ObjectID, key: UniqueKey)?
            // A key through a to-one relationship to an object this save inserts is no live object's: there is
            // nothing to look up (and a store cannot look up a temporary ID).
            for key in keys where !key.refersToAnInsert {
                if let id = try source.object(of: entity.name, withKey: key.values), !deleted.contains(id) {
                    existing = (id, key)
                    break
                }
            }
            guard let existing else {
                // Only a later insert can meet this one's keys.
                if position < request.inserts.count - 1 {
                    for key in keys { keysOfKept[key] = kept.count }
                }
                kept.append(insert)
                continue
            }
            aliases[insert.id] = existing.id
            switch request.mergePolicy {
            case .error:
                _ = try load(existing.id)
                conflicts.append(
                    .init(
                        id: existing.id, version: nil, currentVersion: objects[loadedSlot(existing.id)].before?.version,
                        currentValues: try committedValues(of: existing.id), insert: insert.id,
                        uniqueKey: existing.key.values))
            case .objectTrump, .overwrite:
                if request.updates.contains(where: { $0.id == existing.id }) { continue }  // its own update wins
                if let earlier = upserts.firstIndex(where: { $0.id == existing.id }) {
                    upserts[earlier].values.merge(insert.values) { _, later in later }
                } else {
                    upserts.append(SaveRequest.Update(id: existing.id, version: nil, values: insert.values))
                }
            case .storeTrump, .rollback:
                break
            }
        }
        if !conflicts.isEmpty { throw StoreError.conflict(conflicts) }
        guard !aliases.isEmpty else { return (request, [:]) }
        var resolved = request
        resolved.inserts = kept.map { SaveRequest.Insert(id: $0.id, values: Self.resolving($0.values, aliases)) }
        resolved.updates =
            request.updates.map { update in
                var update = update
                update.values = Self.resolving(update.values, aliases)
                return update
            }
            + upserts.map { update in
                var update = update
                update.values = Self.resolving(update.values, aliases)
                return update
            }
        return (resolved, aliases)
    }

    /// Fails the save when an object it inserts or updates would share a unique key with another object of the save
    /// or a live object it leaves alone.
    ///
    /// - Throws: `.conflict` with `conflictsWith`, under every merge policy.
    func checkUniqueness(of plan: SavePlan) throws {
        // A lone insert has no other object of the save to meet, and was matched against the live ones before.
        guard !(plan.updated.isEmpty && plan.inserted.count <= 1) else { return }
        // Objects come in runs of one entity: look each run's entity up once.
        var lastEntity: String?
        var lastHasKeys = false
        func hasUniqueKeys(_ id: ObjectID) -> Bool {
            if id.entity != lastEntity {
                lastEntity = id.entity
                lastHasKeys = !(model.entity(named: id.entity)?.uniqueBy.isEmpty ?? true)
            }
            return lastHasKeys
        }
        guard
            plan.inserted.contains(where: { hasUniqueKeys($0.id) })
                || plan.updated.contains(where: { hasUniqueKeys($0.snapshot.id) })
        else { return }
        var conflicts: [StoreError.Conflict] = []
        var claimed: [UniqueKey: ObjectID] = [:]
        let written = Set(plan.inserted.map(\.id)).union(plan.updated.map(\.snapshot.id))
        let deleted = Set(plan.deleted.map(\.id))
        var candidates: [(snapshot: ObjectSnapshot, changedKeys: Set<String>?)] = plan.inserted.map { ($0, nil) }
        candidates += plan.updated.map { ($0.snapshot, $0.changedKeys) }
        for (snapshot, changedKeys) in candidates {
            guard let entity = model.entity(named: snapshot.id.entity), !entity.uniqueBy.isEmpty else { continue }
            for set in entity.uniqueBy {
                guard let key = uniqueKey(set, of: entity, values: snapshot.values, aliases: [:]) else { continue }
                if let other = claimed[key], other != snapshot.id {
                    conflicts.append(.init(id: snapshot.id, uniqueKey: key.values, conflictsWith: other))
                    continue
                }
                claimed[key] = snapshot.id
                // An insert was matched against the live objects before planning; an update only when it changes
                // the key.
                guard let changedKeys, !changedKeys.isDisjoint(with: set) else { continue }
                if let other = try source.object(of: entity.name, withKey: key.values), other != snapshot.id,
                    !written.contains(other), !deleted.contains(other)
                {
                    conflicts.append(.init(id: snapshot.id, uniqueKey: key.values, conflictsWith: other))
                }
            }
        }
        if !conflicts.isEmpty { throw StoreError.conflict(conflicts) }
    }

    /// The values of `keys` an object with `values` would have (defaults for the attributes left out), as a store
    /// holds them; `nil` when one is `null` (no collision) or is not a value of its key's type.
    private func uniqueKey(
        _ keys: [String], of entity: EntityDescription, values: [String: PropertyValue], aliases: [ObjectID: ObjectID]
    ) -> UniqueKey? {
        var key: [String: PropertyValue] = [:]
        for name in keys {
            if let attribute = entity.attribute(named: name) {
                var value = values[name] ?? attribute.defaultValue ?? .null
                if case .int(let i) = value, attribute.type == .double { value = .double(Double(i)) }
                guard !value.isNull, value.attributeType == attribute.type else { return nil }
                key[name] = value
            } else {
                guard case .reference(let id)? = values[name] else { return nil }
                key[name] = .reference(aliases[id] ?? id)
            }
        }
        return UniqueKey(entity: entity.name, values: key)
    }

    /// `values` with every reference to an aliased insert pointing at what it stands for.
    private static func resolving(
        _ values: [String: PropertyValue], _ aliases: [ObjectID: ObjectID]
    ) -> [String: PropertyValue] {
        values.mapValues { value in
            switch value {
            case .reference(let id): return .reference(aliases[id] ?? id)
            case .references(let ids): return .references(ids.map { aliases[$0] ?? $0 })
            default: return value
            }
        }
    }
}

/// The values of one `uniqueBy` set of one entity.
struct UniqueKey: Hashable {
    let entity: String
    let values: [String: PropertyValue]

    /// Whether a value is a to-one relationship to an object not saved yet (a temporary ID).
    var refersToAnInsert: Bool {
        values.values.contains { value in
            if case .reference(let id) = value { return id.isTemporary }
            return false
        }
    }
}
