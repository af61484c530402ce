import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// `ChangeSet.toManyChanges(model:)`: the members each transaction added to and removed from to-many sets, read
/// from the change set alone.
struct ChangeSetToManyChangesTests {
    @Test(arguments: StoreFactory.all)
    func toManyChangesAreReadFromTheOtherSideOfEachChange(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let store = fixture.store
        let devices = try fixture.seedDevices(2)
        let reading: [String: PropertyValue] = [
            "characteristic": .string("2a19"), "value": .binary(Data([1])), "time": .date(Date()),
            "device": .reference(devices[0]),
        ]
        let inserted = try store.save(SaveRequest(inserts: [.init(id: tmp("Reading", "r"), values: reading)]))
        let id = try #require(inserted.ids[tmp("Reading", "r")])
        expectEqual(
            inserted.changes!.toManyChanges(model: store.model),
            [
                devices[0]: ["readings": ToManyChange(added: [id])]
            ])
        let moved = try store.save(
            SaveRequest(updates: [.init(id: id, version: nil, values: ["device": .reference(devices[1])])]))
        expectEqual(
            moved.changes!.toManyChanges(model: store.model),
            [
                devices[0]: ["readings": ToManyChange(removed: [id])],
                devices[1]: ["readings": ToManyChange(added: [id])],
            ])
        let deleted = try store.save(SaveRequest(deletes: [.init(id: id, version: nil)]))
        expectEqual(
            deleted.changes!.toManyChanges(model: store.model),
            [
                devices[1]: ["readings": ToManyChange(removed: [id])]
            ])
    }
}
