import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import storesvc

struct SubscriptionFilterTests {
    let device = ObjectID(entity: "Device", number: 1)
    let reading = ObjectID(entity: "Reading", number: 5)

    private func filter(
        _ entity: String?, _ predicate: String? = nil, args: [String: JSONValue] = [:]
    ) throws(RPCError) -> SubscriptionFilter {
        try SubscriptionFilter(entity: entity, predicate: predicate, arguments: args, model: .deviceReadings)
    }

    private func snapshot(_ id: ObjectID, version: Int64 = 1, _ values: [String: PropertyValue]) -> ObjectSnapshot {
        ObjectSnapshot(id: id, version: version, values: values)
    }

    private func changes(
        inserted: [ObjectSnapshot] = [], updated: [ChangeSet.Update] = [], deleted: [ObjectSnapshot] = []
    ) -> ChangeSet {
        ChangeSet(
            txn: 7, time: Date(), author: "a", inserted: inserted, updated: updated, deleted: deleted)
    }

    private func rename(from old: String?, to new: String?, version: Int64 = 2) -> ChangeSet.Update {
        ChangeSet.Update(
            snapshot: snapshot(
                device, version: version, ["address": .string("A"), "name": new.map(PropertyValue.string) ?? .null]),
            changedKeys: ["name"], previousValues: ["name": old.map(PropertyValue.string) ?? .null])
    }

    private func event(_ filter: SubscriptionFilter, _ changes: ChangeSet) -> ChangedEvent? {
        filter.event(for: changes, subscription: 3, lookup: { _ in nil })
    }

    @Test func anInsertThatMatchesIsInsertedWithAllValues() throws {
        let e = try #require(
            event(
                try filter("Device", "name BEGINSWITH 'th'"),
                changes(inserted: [snapshot(device, ["address": .string("A"), "name": .string("thermo")])])))
        expectEqual(e.subscription, 3)
        expectEqual(e.txn, 7)
        expectEqual(e.author, "a")
        expectEqual(e.inserted.map(\.id), [device])
        expectEqual(e.inserted[0].values, ["address": .string("A"), "name": .string("thermo")])
        expectTrue(e.updated.isEmpty && e.deleted.isEmpty)
    }

    @Test func anUpdateIntoTheSetIsAnInsertWithAllValues() throws {
        let e = try #require(
            event(try filter("Device", "name BEGINSWITH 'th'"), changes(updated: [rename(from: "x", to: "thing")])))
        expectEqual(e.inserted.map(\.id), [device])
        expectEqual(e.inserted[0].values["address"], .string("A"))
        expectEqual(e.inserted[0].version, 2)
    }

    @Test func anUpdateOutOfTheSetIsADelete() throws {
        let e = try #require(
            event(try filter("Device", "name BEGINSWITH 'th'"), changes(updated: [rename(from: "thing", to: "x")])))
        expectEqual(e.deleted, [device])
        expectTrue(e.inserted.isEmpty && e.updated.isEmpty)
    }

    @Test func anUpdateWithinTheSetCarriesOnlyTheChangedKeys() throws {
        let e = try #require(
            event(try filter("Device", "name BEGINSWITH 'th'"), changes(updated: [rename(from: "thing", to: "thong")])))
        expectEqual(e.updated.map(\.id), [device])
        expectEqual(e.updated[0].values, ["name": .string("thong")])
    }

    @Test func anUpdateOutsideTheSetBothTimesIsNoEvent() throws {
        expectNil(event(try filter("Device", "name BEGINSWITH 'th'"), changes(updated: [rename(from: "a", to: "b")])))
    }

    @Test func aChangedKeyThatBecomesNullIsSentAsNull() throws {
        let e = try #require(event(try filter("Device"), changes(updated: [rename(from: "a", to: nil)])))
        expectEqual(e.updated[0].values, ["name": .null])
    }

    @Test func deletesReportOnlyObjectsThatWereInTheSet() throws {
        let f = try filter("Device", "name == 'in'")
        expectNil(event(f, changes(deleted: [snapshot(device, ["name": .string("out")])])))
        expectEqual(event(f, changes(deleted: [snapshot(device, ["name": .string("in")])]))?.deleted, [device])
    }

    @Test func otherEntitiesAreIgnoredAndNoEntityMeansEveryEntity() throws {
        let mixed = changes(
            inserted: [snapshot(reading, ["characteristic": .string("2a19")])],
            deleted: [snapshot(device, ["name": .null])])
        expectNil(event(try filter("Device", "name == 'zzz'"), mixed))
        let all = try #require(event(try filter(nil), mixed))
        expectEqual(all.inserted.map(\.id), [reading])
        expectEqual(all.deleted, [device])
    }

    @Test func keyPathsThroughRelationshipsReadRelatedObjectsThroughTheLookup() throws {
        let f = try filter("Reading", "device.name == $n", args: ["n": .string("thermo")])
        let inserted = changes(inserted: [snapshot(reading, ["device": .reference(device)])])
        let matched = f.event(for: inserted, subscription: 1) { id in
            id == device ? ["name": .string("thermo")] : nil
        }
        expectEqual(matched?.inserted.map(\.id), [reading])
        expectNil(f.event(for: inserted, subscription: 1) { _ in ["name": .string("other")] })
    }

    @Test func badFiltersAreNamedFields() {
        for (entity, predicate, field) in [
            ("Gadget", nil, "entity"), ("Device", "name ==", "where"), ("Device", "colour == 1", "where"),
            (nil, "name == 'x'", "where"), ("Device", "name == $missing", "where"),
        ] as [(String?, String?, String)] {
            do {
                _ = try filter(entity, predicate)
                Issue.record("expected \(field) to be refused")
            } catch {
                expectEqual(error.code, .invalidParams)
                expectEqual(error.field, field)
            }
        }
    }
}
