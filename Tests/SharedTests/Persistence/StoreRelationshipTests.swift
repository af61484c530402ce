import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Inverse maintenance, version bumps of the other side, and delete rules, against every store.
struct StoreRelationshipTests {
    @Test(arguments: StoreFactory.all)
    func settingAToOneAddsToTheInverseAndBumpsItsVersion(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("AA")])
        let ref = tmp("Reading", "r")
        let result = try store.commit(
            SaveRequest(inserts: [
                .init(
                    id: ref,
                    values: [
                        "characteristic": .string("2a19"), "value": .binary(Data([1])), "time": .date(Date()),
                        "device": .reference(device),
                    ])
            ]))
        let reading = try #require(result.ids[ref])
        expectEqual(result.versions, [reading: 1, device: 2])
        let update = try #require(result.changes!.updated.first)
        expectTrue(update.snapshot.id == device && update.changedKeys == ["readings"])
        // The device's readings are a fault the save did not read: changed, but not carried
        // (StoreToManyFaultTests); the store's snapshot lists them.
        expectTrue(update.previousValues["readings"] == nil && update.snapshot.values["readings"] == nil)
        let completed = try store.completingToManyValues(in: result.changes!)
        expectEqual(completed.updated.first?.previousValues, ["readings": .references([])])
        expectEqual(completed.updated.first?.snapshot.values["readings"], .references([reading]))
        try expectEqual(store.snapshot(device)?.values["readings"], .references([reading]))
        try expectEqual(store.snapshot(device)?.version, 2)
    }

    @Test(arguments: StoreFactory.all)
    func toManyValuesAreTheCompleteNewSet(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let shelf = try store.insert("Shelf", ["name": .string("s")])
        let a = try store.insert("Book", ["title": .string("a"), "shelf": .reference(shelf)])
        let b = try store.insert("Book", ["title": .string("b"), "shelf": .reference(shelf)])
        let c = try store.insert("Book", ["title": .string("c")])
        try expectEqual(store.snapshot(shelf)?.values["books"], .references([a, b]))
        let result = try store.commit(
            SaveRequest(updates: [.init(id: shelf, version: 3, values: ["books": .references([c, b])])]))
        expectEqual(result.versions, [shelf: 4, a: 2, c: 2])
        try expectEqual(store.snapshot(a)?.values["shelf"], .null)
        try expectEqual(store.snapshot(c)?.values["shelf"], .reference(shelf))
        try expectEqual(store.snapshot(b)?.version, 1)
        let changed = Dictionary(uniqueKeysWithValues: result.changes!.updated.map { ($0.snapshot.id, $0.changedKeys) })
        expectEqual(changed, [shelf: ["books"], a: ["shelf"], c: ["shelf"]])
    }

    @Test(arguments: StoreFactory.all)
    func movingAnObjectRemovesItFromItsFormerOwner(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let s1 = try store.insert("Shelf", ["name": .string("1")])
        let s2 = try store.insert("Shelf", ["name": .string("2")])
        let book = try store.insert("Book", ["title": .string("b"), "shelf": .reference(s1)])
        try store.commit(SaveRequest(updates: [.init(id: s2, version: 1, values: ["books": .references([book])])]))
        try expectEqual(store.snapshot(s1)?.values["books"], .references([]))
        try expectEqual(store.snapshot(book)?.values["shelf"], .reference(s2))
    }

    @Test(arguments: StoreFactory.all)
    func manyToManyIsMaintainedOnBothSides(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let author = try store.insert("Author", ["name": .string("x")])
        let b1 = try store.insert("Book", ["title": .string("1"), "authors": .references([author])])
        let b2 = try store.insert("Book", ["title": .string("2"), "authors": .references([author])])
        try expectEqual(store.snapshot(author)?.values["books"], .references([b1, b2]))
        try store.commit(SaveRequest(updates: [.init(id: author, version: nil, values: ["books": .references([b2])])]))
        try expectEqual(store.snapshot(b1)?.values["authors"], .references([]))
        try expectEqual(store.snapshot(b2)?.values["authors"], .references([author]))
        try expectEqual(store.snapshot(author)?.version, 4)
    }

    @Test(arguments: StoreFactory.all)
    func oneToOneTakesThePartnerAwayFromItsFormerOwner(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let portrait = try store.insert("Portrait", [:])
        let a1 = try store.insert("Author", ["name": .string("1"), "portrait": .reference(portrait)])
        let a2 = try store.insert("Author", ["name": .string("2")])
        try store.commit(
            SaveRequest(updates: [.init(id: a2, version: nil, values: ["portrait": .reference(portrait)])]))
        try expectEqual(store.snapshot(a1)?.values["portrait"], .null)
        try expectEqual(store.snapshot(portrait)?.values["author"], .reference(a2))
    }

    @Test(arguments: StoreFactory.all)
    func temporaryIDsReferToOtherInsertsOfTheSameSave(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let shelf = tmp("Shelf", "s")
        let book = tmp("Book", "b")
        let author = tmp("Author", "a")
        let result = try store.commit(
            SaveRequest(inserts: [
                .init(
                    id: book,
                    values: ["title": .string("t"), "shelf": .reference(shelf), "authors": .references([author])]),
                .init(id: shelf, values: ["name": .string("n")]),
                .init(id: author, values: ["name": .string("a")]),
            ]))
        let ids = result.ids
        expectEqual(Set(ids.keys), [shelf, book, author])
        try expectEqual(store.snapshot(ids[shelf]!)?.values["books"], .references([ids[book]!]))
        try expectEqual(store.snapshot(ids[author]!)?.values["books"], .references([ids[book]!]))
        expectEqual(result.changes!.inserted.map(\.id), [ids[book]!, ids[shelf]!, ids[author]!])
        expectEmpty(result.changes!.updated)
        expectTrue(result.versions.values.allSatisfy { $0 == 1 })
    }

    @Test(arguments: StoreFactory.all)
    func cascadeDeletesAppearInDeleted(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("AA")])
        var readings: [ObjectID] = []
        for i in 0..<3 {
            readings.append(
                try store.insert(
                    "Reading",
                    [
                        "characteristic": .string("c\(i)"), "value": .binary(Data()), "time": .date(Date()),
                        "device": .reference(device),
                    ]))
        }
        let result = try store.commit(SaveRequest(deletes: [.init(id: device, version: nil)]))
        expectEqual(result.changes!.deleted.map(\.id), [device] + readings)
        expectEmpty(result.changes!.updated)
        expectTrue(try store.all("Reading").isEmpty)
    }

    @Test(arguments: StoreFactory.all)
    func nullifyUpdatesTheOtherSide(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("AA")])
        let reading = try store.insert(
            "Reading",
            [
                "characteristic": .string("c"), "value": .binary(Data()), "time": .date(Date()),
                "device": .reference(device),
            ])
        let result = try store.commit(SaveRequest(deletes: [.init(id: reading, version: 1)]))
        expectEqual(result.changes!.deleted.map(\.id), [reading])
        expectEqual(result.versions, [device: 3])
        expectEqual(result.changes!.updated.first?.changedKeys, ["readings"])
        try expectEqual(store.snapshot(device)?.values["readings"], .references([]))
    }

    @Test(arguments: StoreFactory.all)
    func denyRefusesTheDeleteWhileTheRelationshipIsNotEmpty(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let shelf = try store.insert("Shelf", ["name": .string("s")])
        let book = try store.insert("Book", ["title": .string("b"), "shelf": .reference(shelf)])
        let error = storeError { try store.commit(SaveRequest(deletes: [.init(id: shelf, version: nil)])) }
        expectEqual(
            error, .validation([.init(id: shelf, key: "books", reason: "delete rule deny: still related to \(book)")]))
        expectNotNil(try store.snapshot(shelf))
        // Deleting the book in the same save empties the relationship: allowed.
        let result = try store.commit(
            SaveRequest(deletes: [.init(id: shelf, version: nil), .init(id: book, version: nil)]))
        expectEqual(Set(result.changes!.deleted.map(\.id)), [shelf, book])
    }

    @Test(arguments: StoreFactory.all)
    func cascadeFollowsOneToOne(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let portrait = try store.insert("Portrait", ["caption": .string("c")])
        let author = try store.insert("Author", ["name": .string("a"), "portrait": .reference(portrait)])
        let book = try store.insert("Book", ["title": .string("b"), "authors": .references([author])])
        let result = try store.commit(SaveRequest(deletes: [.init(id: author, version: nil)]))
        expectEqual(result.changes!.deleted.map(\.id), [author, portrait])
        expectEqual(result.changes!.updated.map(\.snapshot.id), [book])
        try expectEqual(store.snapshot(book)?.values["authors"], .references([]))
    }
}
