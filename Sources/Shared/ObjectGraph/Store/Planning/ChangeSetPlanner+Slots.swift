/// Where the planner keeps its working objects: in one array, the inserts as one run in request
/// order, existing objects after them as they are loaded.
///
/// An object is found by ID without hashing when this save numbered it (an insert with a
/// temporary ID: its number falls in the range the save allocated for its entity); only existing
/// objects and inserts that bring a reserved permanent ID are in the `slots` dictionary.
extension ChangeSetPlanner {
    /// The numbers allocated by this save for the temporary-ID inserts of one entity, and the
    /// slot of each, in number order.
    package struct AllocatedNumbers {
        package let entity: String
        package let first: Int64
        package var slots: [Int]
    }

    /// The slot of the loaded (or inserted) object `id`, or `nil` when the save has not touched it.
    func slot(of id: ObjectID) -> Int? {
        guard let number = id.number else { return nil }
        for range in allocated where range.entity == id.entity {
            let offset = number - range.first
            if offset >= 0, offset < Int64(range.slots.count) { return range.slots[Int(offset)] }
        }
        return slots[id]
    }

    /// The slot of `id`, which the save has loaded or inserted.
    func loadedSlot(_ id: ObjectID) -> Int {
        guard let slot = slot(of: id) else { preconditionFailure("\(id) is not loaded") }
        return slot
    }

    /// The position of the entity named `name` in the model's `entities`.
    func entityIndex(named name: String) -> Int? {
        entityIndices[name]
    }

    /// The slots of the inserts, in request order.
    var insertSlots: Range<Int> { firstInsertSlot..<firstInsertSlot + requestInserts.count }

    /// The ID in the request of the object in `slot`: an insert's own (often temporary) ID.
    func requestID(ofSlot slot: Int) -> ObjectID {
        insertSlots.contains(slot) ? requestInserts[slot - firstInsertSlot].id : objects[slot].id
    }

    /// Gives the inserts their permanent IDs (allocating numbers for temporary IDs, per entity in
    /// name order) and their slots.
    mutating func assignPermanentIDs(_ inserts: [SaveRequest.Insert]) throws {
        requestInserts = inserts
        firstInsertSlot = objects.count
        if let entity = inserts.first?.id.entity, inserts.allSatisfy({ $0.id.entity == entity }) {
            try assignPermanentIDs(inserts, of: entity)
            return
        }
        // Entities are few: a list with the last one used at hand beats hashing every insert's.
        var counts: [(entity: String, index: Int, count: Int)] = []
        var entityOfInsert: [Int] = []
        entityOfInsert.reserveCapacity(inserts.count)
        var last = -1
        for insert in inserts {
            if last < 0 || counts[last].entity != insert.id.entity {
                if let known = counts.firstIndex(where: { $0.entity == insert.id.entity }) {
                    last = known
                } else {
                    counts.append((insert.id.entity, entityIndex(named: insert.id.entity)!, 0))
                    last = counts.count - 1
                }
            }
            if insert.id.isTemporary { counts[last].count += 1 }
            entityOfInsert.append(last)
        }
        var next: [Int64] = Array(repeating: 0, count: counts.count)
        var rangeOfGroup: [Int] = Array(repeating: -1, count: counts.count)
        for i in counts.indices.sorted(by: { counts[$0].entity < counts[$1].entity }) where counts[i].count > 0 {
            next[i] = try source.allocateNumbers(entity: counts[i].entity, count: counts[i].count)
            rangeOfGroup[i] = allocated.count
            allocated.append(AllocatedNumbers(entity: counts[i].entity, first: next[i], slots: []))
            allocated[allocated.count - 1].slots.reserveCapacity(counts[i].count)
        }
        objects.reserveCapacity(objects.count + inserts.count)
        for (position, insert) in inserts.enumerated() {
            let group = entityOfInsert[position]
            let slot = firstInsertSlot + position
            var id = insert.id
            if insert.id.isTemporary {
                id = ObjectID(entity: insert.id.entity, number: next[group])
                allocated[rangeOfGroup[group]].slots.append(slot)
                next[group] += 1
            } else {
                slots[id] = slot
            }
            objects.append(WorkingObject(insertedAs: id, entityIndex: counts[group].index))
        }
    }

    /// `assignPermanentIDs` for inserts that are all of `entity` (most saves): the same numbers and slots, without
    /// the tables that sort several entities' runs.
    private mutating func assignPermanentIDs(_ inserts: [SaveRequest.Insert], of entity: String) throws {
        let index = entityIndex(named: entity)!
        let temporaries = inserts.reduce(0) { $0 + ($1.id.isTemporary ? 1 : 0) }
        var next: Int64 = 0
        if temporaries > 0 {
            next = try source.allocateNumbers(entity: entity, count: temporaries)
            allocated.append(AllocatedNumbers(entity: entity, first: next, slots: []))
            allocated[allocated.count - 1].slots.reserveCapacity(temporaries)
        }
        objects.reserveCapacity(objects.count + inserts.count)
        for (position, insert) in inserts.enumerated() {
            let slot = firstInsertSlot + position
            var id = insert.id
            if insert.id.isTemporary {
                id = ObjectID(entity: entity, number: next)
                allocated[allocated.count - 1].slots.append(slot)
                next += 1
            } else {
                slots[id] = slot
            }
            objects.append(WorkingObject(insertedAs: id, entityIndex: index))
        }
    }
}
