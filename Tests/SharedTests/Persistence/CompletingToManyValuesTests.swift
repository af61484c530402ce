import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// `PersistentStore.completingToManyValues(in:)` fills a change set's left-out to-many values with the members
/// as of that change set's own transaction, however many transactions have committed since.
struct CompletingToManyValuesTests {
    private static func reading(_ i: Int, device: ObjectID) -> [String: PropertyValue] {
        [
            "characteristic": .string("2a\(i)"), "value": .binary(Data([1])),
            "time": .date(Date(timeIntervalSince1970: Double(i))), "device": .reference(device),
        ]
    }

    /// Saves one reading of `device` and returns the save's result and the reading's ID.
    private static func saveReading(
        _ i: Int, of device: ObjectID, in store: any PersistentStore
    ) throws -> (SaveResult, ObjectID) {
        let temporary = tmp("Reading", "r\(i)")
        let result = try store.save(SaveRequest(inserts: [.init(id: temporary, values: reading(i, device: device))]))
        return (result, try #require(result.ids[temporary]))
    }

    @Test(arguments: StoreFactory.all)
    func theSetIsTheOneAsOfTheChangeSetsTransactionNotTheStoresCurrentOne(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("AA")])
        let other = try store.insert("Device", ["address": .string("BB")])
        let first = try store.insert("Reading", Self.reading(1, device: device))
        let (result, second) = try Self.saveReading(2, of: device, in: store)
        expectTrue(result.changes!.hasToManyFaults)
        // Later transactions: a third reading joins, the first one moves to the other device.
        _ = try Self.saveReading(3, of: device, in: store)
        try store.commit(SaveRequest(updates: [.init(id: first, version: nil, values: ["device": .reference(other)])]))
        let completed = try store.completingToManyValues(in: result.changes!)
        expectFalse(completed.hasToManyFaults)
        let update = try #require(completed.updated.first { $0.snapshot.id == device })
        expectEqual(update.snapshot.values["readings"], .references([first, second]))
        expectEqual(update.previousValues["readings"], .references([first]))
    }

    @Test(arguments: StoreFactory.all)
    func aDeviceDeletedLaterStillGetsTheSetItHadAsOfTheTransaction(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)
        let device = try store.insert("Device", ["address": .string("AA")])
        let first = try store.insert("Reading", Self.reading(1, device: device))
        let (result, second) = try Self.saveReading(2, of: device, in: store)
        _ = try Self.saveReading(3, of: device, in: store)
        try store.commit(SaveRequest(deletes: [.init(id: device, version: nil)]))
        expectNil(try store.snapshot(device))
        let completed = try store.completingToManyValues(in: result.changes!)
        let update = try #require(completed.updated.first { $0.snapshot.id == device })
        expectEqual(update.snapshot.values["readings"], .references([first, second]))
        expectEqual(update.previousValues["readings"], .references([first]))
    }

    @Test(arguments: StoreFactory.all)
    func aManyToManySetIsTheOneAsOfTheTransaction(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let author = try store.insert("Author", ["name": .string("a")])
        let b1 = try store.insert("Book", ["title": .string("1"), "authors": .references([author])])
        let temporary = tmp("Book", "2")
        let result = try store.save(
            SaveRequest(inserts: [
                .init(id: temporary, values: ["title": .string("2"), "authors": .references([author])])
            ]))
        let b2 = try #require(result.ids[temporary])
        expectTrue(result.changes!.hasToManyFaults)
        try store.insert("Book", ["title": .string("3"), "authors": .references([author])])
        try store.commit(SaveRequest(updates: [.init(id: b1, version: nil, values: ["authors": .references([])])]))
        let completed = try store.completingToManyValues(in: result.changes!)
        let update = try #require(completed.updated.first { $0.snapshot.id == author })
        expectEqual(update.snapshot.values["books"], .references([b1, b2]))
        expectEqual(update.previousValues["books"], .references([b1]))
    }

    @Test(arguments: StoreFactory.all)
    func aChangeSetTheHistoryNoLongerReachesBackToCannotBeCompleted(factory: StoreFactory) throws {
        let store = try factory.make(Model.deviceReadings)  // the factories keep 50 transactions
        let device = try store.insert("Device", ["address": .string("AA")])
        let (result, _) = try Self.saveReading(0, of: device, in: store)
        for i in 1...80 { _ = try Self.saveReading(i, of: device, in: store) }
        let error = storeError { _ = try store.completingToManyValues(in: result.changes!) }
        guard case .historyUnavailable? = error else {
            Issue.record("expected historyUnavailable, got \(String(describing: error))")
            return
        }
    }
}
