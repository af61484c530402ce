import Foundation

/// Turns a `SaveRequest` into a `SavePlan`: the save semantics both stores share.
///
/// In order: the request's shape is checked against the model (`SaveRequestChecker`,
/// `.invalidRequest`); updates and deletes are matched to the committed objects (an update of a
/// missing object is `.notFound`), versions are compared and the merge policy applied
/// (`.conflict` under `error`); inserts get permanent IDs and defaults; values are type-checked,
/// relationships set with their inverses maintained (`ChangeSetPlanner+Relationships.swift`);
/// deletes follow their delete rules; then required attributes and `deny` rules are checked
/// (`.validation`). Nothing is written: the store applies the returned plan.
package struct ChangeSetPlanner {
    package let model: Model
    package let source: any ChangeSetSource

    /// The model's entities, and each one's position (`WorkingObject.entityIndex`).
    package let entities: [EntityDescription]
    package let entityIndices: [String: Int]
    /// Per entity (by position): its attribute names, and each attribute's value in a new object.
    package let attributeNames: [[String]]
    package let attributeDefaults: [[PropertyValue]]

    /// Every object the save touched, loaded on first use (`ChangeSetPlanner+Slots.swift`).
    package var objects: [WorkingObject] = []
    /// The slot of every loaded existing object and of every insert with a reserved permanent ID.
    package var slots: [ObjectID: Int] = [:]
    /// The numbers allocated for temporary-ID inserts, per entity, with their slots.
    package var allocated: [AllocatedNumbers] = []
    /// The request's inserts; insert `i` is in slot `firstInsertSlot + i`.
    package var requestInserts: [SaveRequest.Insert] = []
    package var firstInsertSlot = 0
    /// Each insert's ID in the request → its position in the request (from `SaveRequestChecker`).
    package var insertPositions: [ObjectID: Int] = [:]
    /// The slots of existing objects in the order they were first touched (the order of `updated`).
    package var touchOrder: [Int] = []
    package var deletionOrder: [Int] = []
    package var failures: [StoreError.ValidationFailure] = []
    package var denials: [(owner: ObjectID, key: String, targets: [ObjectID])] = []

    /// What the planner looks up in the model, worked out once per model: a store that plans
    /// many saves keeps one and starts each planner from it.
    package struct ModelLayout: Sendable {
        let model: Model
        let entities: [EntityDescription]
        let entityIndices: [String: Int]
        let attributeNames: [[String]]
        let attributeDefaults: [[PropertyValue]]

        package init(model: Model) {
            self.model = model
            entities = model.entities
            var indices: [String: Int] = [:]
            for (i, entity) in entities.enumerated() { indices[entity.name] = i }
            entityIndices = indices
            attributeNames = entities.map { $0.attributes.map(\.name) }
            attributeDefaults = entities.map { $0.attributes.map { $0.defaultValue ?? .null } }
        }
    }

    package init(model: Model, source: any ChangeSetSource) {
        self.init(layout: ModelLayout(model: model), source: source)
    }

    package init(layout: ModelLayout, source: any ChangeSetSource) {
        self.model = layout.model
        self.source = source
        entities = layout.entities
        entityIndices = layout.entityIndices
        attributeNames = layout.attributeNames
        attributeDefaults = layout.attributeDefaults
    }

    /// Plans `request` against the source's current state.
    ///
    /// - Throws: `StoreError` (`.invalidRequest`, `.notFound`, `.conflict`, `.validation`) or the
    ///   source's storage error.
    package mutating func plan(_ saved: SaveRequest) throws -> SavePlan {
        var matched: Int?
        var asked = saved
        if let batch = saved.batch {
            if let plan = try bulkDeletePlan(batch, in: saved) ?? bulkUpdatePlan(batch, in: saved) { return plan }
            (asked, matched) = try resolving(batch, in: saved)
        }
        insertPositions = try SaveRequestChecker(model: model).check(asked)
        let (request, aliases) = try resolvingUniqueKeys(of: asked)
        if !aliases.isEmpty { insertPositions = try SaveRequestChecker(model: model).check(request) }
        try checkReservedInserts(request.inserts)
        let (updates, deletes) = try resolveConflicts(request)
        try assignPermanentIDs(request.inserts)
        for (slot, insert) in zip(insertSlots, request.inserts) { try applyInsert(insert, at: slot) }
        for (id, values) in updates { try applyUpdate(of: id, values: values) }
        for id in deletes { try delete(id) }
        checkDenials()
        checkRequiredAttributes()
        checkJSONForms()
        guard failures.isEmpty else { throw StoreError.validation(failures) }
        var plan = try makePlan(request)
        plan.matched = matched
        try checkUniqueness(of: plan)
        // An insert that found its key taken stands for that object (or the earlier insert it met).
        for (insert, target) in aliases { plan.ids[insert] = plan.ids[target] ?? target }
        return plan
    }

    // MARK: - Versions and merge policies

    private mutating func resolveConflicts(
        _ request: SaveRequest
    ) throws -> (updates: [(ObjectID, [String: PropertyValue])], deletes: [ObjectID]) {
        var conflicts: [StoreError.Conflict] = []
        var updates: [(ObjectID, [String: PropertyValue])] = []
        for update in request.updates {
            guard try load(update.id), let current = objects[loadedSlot(update.id)].before else {
                throw StoreError.notFound(update.id)
            }
            guard let version = update.version, version != current.version else {
                updates.append((update.id, update.values))
                continue
            }
            switch request.mergePolicy {
            case .error:
                conflicts.append(
                    .init(
                        id: update.id, version: version, currentVersion: current.version,
                        currentValues: try committedValues(of: update.id)))
            case .rollback:
                continue
            case .objectTrump, .overwrite:
                updates.append((update.id, update.values))
            case .storeTrump:
                let entity = model.entity(named: update.id.entity)!
                var unchangedByStore: [String: PropertyValue] = [:]
                for (key, value) in update.values {
                    guard let original = update.original[key] else { continue }
                    let committed = try committedValue(of: update.id, key: key)
                    if Self.normalized(original, key: key, in: entity)
                        == Self.normalized(committed, key: key, in: entity)
                    {
                        unchangedByStore[key] = value
                    }
                }
                updates.append((update.id, unchangedByStore))
            }
        }
        var deletes: [ObjectID] = []
        for delete in request.deletes {
            guard try load(delete.id), let current = objects[loadedSlot(delete.id)].before else {
                if request.mergePolicy == .error {
                    conflicts.append(
                        .init(id: delete.id, version: delete.version, currentVersion: nil, currentValues: [:]))
                }
                continue
            }
            if let version = delete.version, version != current.version {
                if request.mergePolicy == .error {
                    conflicts.append(
                        .init(
                            id: delete.id, version: version, currentVersion: current.version,
                            currentValues: try committedValues(of: delete.id)))
                    continue
                }
                if request.mergePolicy == .rollback { continue }
            }
            deletes.append(delete.id)
        }
        if !conflicts.isEmpty { throw StoreError.conflict(conflicts) }
        return (updates, deletes)
    }

    /// A value in the form a snapshot holds it, for comparisons (`storeTrump`).
    private static func normalized(_ value: PropertyValue, key: String, in entity: EntityDescription) -> PropertyValue {
        switch value {
        case .references(let ids): return .references(ids.sorted())
        case .int(let i) where entity.attribute(named: key)?.type == .double: return .double(Double(i))
        default: return value
        }
    }

    // MARK: - Inserts and updates

    private mutating func checkReservedInserts(_ inserts: [SaveRequest.Insert]) throws {
        for (i, insert) in inserts.enumerated() {
            guard let number = insert.id.number else { continue }
            guard number <= (try source.highestAllocatedNumber(entity: insert.id.entity)) else {
                throw StoreError.invalidRequest(
                    field: "insert[\(i)].id", message: "\(insert.id) was not reserved with obtainPermanentIDs")
            }
            guard try source.snapshot(of: insert.id) == nil else {
                throw StoreError.invalidRequest(field: "insert[\(i)].id", message: "\(insert.id) already exists")
            }
        }
    }

    /// Sets an insert's attributes (checked, defaults for the missing) and relationships.
    private mutating func applyInsert(_ insert: SaveRequest.Insert, at slot: Int) throws {
        let entityIndex = objects[slot].entityIndex
        let entity = entities[entityIndex]
        let id = objects[slot].id
        // The request's values go straight into the defaults by attribute position, found by
        // walking the (few) values rather than hashing every attribute name; `checkKeys` has made
        // sure each key is a property. Which positions the request gave is a bit mask.
        var attributes = attributeDefaults[entityIndex]
        var setsRelationships = false
        if entity.attributes.count <= 64 {
            let names = attributeNames[entityIndex]
            var given: UInt64 = 0
            for (key, value) in insert.values {
                if let position = names.firstIndex(of: key) {
                    attributes[position] = value
                    given |= 1 << UInt64(position)
                } else {
                    setsRelationships = true
                }
            }
            // Checked in attribute order, so that failures are reported in that order.
            while given != 0 {
                let position = given.trailingZeroBitCount
                given &= given - 1
                attributes[position] = checked(attributes[position], for: entity.attributes[position], of: id) ?? .null
            }
        } else {
            for (position, attribute) in entity.attributes.enumerated() {
                guard let value = insert.values[attribute.name] else { continue }
                attributes[position] = checked(value, for: attribute, of: id) ?? .null
            }
            setsRelationships = true
        }
        objects[slot].attributes = attributes
        guard setsRelationships else { return }
        for relationship in entity.relationships {
            guard let value = insert.values[relationship.name] else { continue }
            try setRelationship(relationship, of: id, to: value)
        }
    }

    private mutating func applyUpdate(of id: ObjectID, values: [String: PropertyValue]) throws {
        let slot = loadedSlot(id)
        let entity = entities[objects[slot].entityIndex]
        for key in values.keys.sorted() {
            if let position = entity.attributes.firstIndex(where: { $0.name == key }) {
                guard let checked = checked(values[key]!, for: entity.attributes[position], of: id) else { continue }
                objects[slot].attributes[position] = checked
            } else if let relationship = entity.relationship(named: key) {
                try setRelationship(relationship, of: id, to: values[key]!)
            }
        }
    }

    /// `value` as `attribute` stores it, or `nil` after recording why it does not fit.
    mutating func checked(
        _ value: PropertyValue, for attribute: AttributeDescription, of id: ObjectID
    ) -> PropertyValue? {
        switch value {
        case .null:
            return .null
        case .int(let i) where attribute.type == .double:
            return .double(Double(i))
        // NaN and infinities have no JSON form, so neither the history nor the wire could carry them
        // (docs/wire-format.md, "NaN and infinities").
        case .double(let d) where !d.isFinite:
            fail(id, attribute.name, d.isNaN ? "NaN cannot be stored" : "an infinity cannot be stored")
            return nil
        case .date(let d) where !d.timeIntervalSinceReferenceDate.isFinite:
            fail(id, attribute.name, "a date must be finite")
            return nil
        case .json(let j) where j.holdsNonFiniteNumber:
            fail(id, attribute.name, "NaN and infinities cannot be stored (JSON has no form for them)")
            return nil
        case .date(let d) where attribute.type == .date:
            // Stored as seconds since 1970 (`SQLSchema`); keep the value the store will read back.
            return .date(Date(timeIntervalSince1970: d.timeIntervalSince1970))
        default:
            guard value.attributeType == attribute.type else {
                fail(id, attribute.name, "expected a \(attribute.type.rawValue), got \(Self.kind(of: value))")
                return nil
            }
            return value
        }
    }

    /// A value's type, for failure reasons.
    package static func kind(of value: PropertyValue) -> String {
        switch value {
        case .reference: return "an object ID"
        case .references: return "a list of object IDs"
        case .null: return "null"
        default: return value.attributeType.map { "a \($0.rawValue)" } ?? "\(value)"
        }
    }

    // MARK: - Final checks and the plan

    mutating func checkDenials() {
        for denial in denials {
            let remaining = denial.targets.filter { target in slot(of: target).map { objects[$0].isDeleted } != true }
            if !remaining.isEmpty {
                fail(
                    denial.owner, denial.key,
                    "delete rule deny: still related to \(remaining.map(\.description).joined(separator: ", "))")
            }
        }
    }

    mutating func checkRequiredAttributes() {
        for slot in [Array(insertSlots), touchOrder].joined() where !objects[slot].isDeleted {
            let entity = entities[objects[slot].entityIndex]
            for (position, attribute) in entity.attributes.enumerated() where !attribute.isOptional {
                guard objects[slot].attribute(at: position).isNull else { continue }
                if objects[slot].isInserted || objects[slot].before?.values[attribute.name].map({ !$0.isNull }) ?? false
                {
                    fail(objects[slot].id, attribute.name, "is required")
                }
            }
        }
    }

    /// Fails every updated object that still holds NaN or an infinity: `checked` refuses them, so only a database
    /// written by an earlier version holds one, and JSON has no form for it (the object's `json` column, its
    /// history and the wire could not carry it). Replacing the value with a finite one or null is the way out.
    mutating func checkJSONForms() {
        for slot in touchOrder where !objects[slot].isDeleted && objects[slot].before != nil {
            let entity = entities[objects[slot].entityIndex]
            for (position, attribute) in entity.attributes.enumerated()
            where !objects[slot].attribute(at: position).hasJSONForm {
                fail(
                    objects[slot].id, attribute.name,
                    "holds NaN or an infinity, stored by an earlier version: JSON has no form for it; save a finite "
                        + "value or null")
            }
        }
    }

    /// Records a validation failure, naming an insert by its ID in the request.
    package mutating func fail(_ id: ObjectID, _ key: String, _ reason: String) {
        failures.append(.init(id: slot(of: id).map { requestID(ofSlot: $0) } ?? id, key: key, reason: reason))
    }

    mutating func makePlan(_ request: SaveRequest) throws -> SavePlan {
        var plan = SavePlan()
        plan.ids = insertPositions.mapValues { objects[firstInsertSlot + $0].id }
        plan.inserted.reserveCapacity(request.inserts.count)
        for slot in insertSlots where !objects[slot].isDeleted {
            let object = objects[slot]
            plan.inserted.append(
                ObjectSnapshot(id: object.id, version: 1, values: object.values(of: entities[object.entityIndex])))
        }
        for slot in touchOrder {
            let object = objects[slot]
            let id = object.id
            guard let before = object.before, !object.isDeleted else { continue }
            let entity = entities[object.entityIndex]
            let after = object.values(of: entity)
            var changedKeys: Set<String> = []
            var previousValues: [String: PropertyValue] = [:]
            for (key, value) in after where entity.relationship(named: key)?.isToMany != true {
                let old = before.values[key] ?? .null
                if old != value {
                    changedKeys.insert(key)
                    previousValues[key] = old
                }
            }
            for (key, delta) in object.toManyDeltas where !delta.isEmpty {
                changedKeys.insert(key)
                // A to-many read in full is reported with its whole previous set; a fault only by its key.
                if object.knowsMembers(of: key) {
                    previousValues[key] = .references(object.committedMembers(of: key).sorted())
                }
            }
            guard !changedKeys.isEmpty else { continue }
            if !object.toManyDeltas.isEmpty { plan.toManyDeltas[id] = object.toManyDeltas }
            plan.updated.append(
                .init(
                    snapshot: ObjectSnapshot(id: id, version: before.version + 1, values: after),
                    changedKeys: changedKeys, previousValues: previousValues))
        }
        for slot in deletionOrder {
            let object = objects[slot]
            guard var before = object.before else { continue }
            // Delete rules read every to-many in full: the deleted snapshot carries them, so that
            // the other sides' changes can be derived from the change set (`ChangeSet+ToManyDeltas`).
            for (key, _) in object.toMany {
                before.values[key] = .references(object.committedMembers(of: key).sorted())
            }
            plan.deleted.append(before)
        }
        return plan
    }
}
