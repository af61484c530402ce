import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Merging change sets whose updated snapshots hold only the changed keys (as `RemoteStore`'s do, built from
/// `store.changed` events without reading the objects back).
struct ObjectContextPartialMergeTests {
    private func partialUpdate(
        _ id: ObjectID, version: Int64, values: [String: PropertyValue], txn: Int64 = 1_000
    ) -> ChangeSet {
        ChangeSet(
            txn: txn, time: Date(), author: nil, inserted: [],
            updated: [
                ChangeSet.Update(
                    snapshot: ObjectSnapshot(id: id, version: version, values: values),
                    changedKeys: Set(values.keys), previousValues: [:])
            ], deleted: [])
    }

    @Test(arguments: StoreFactory.all)
    func aPartialSnapshotOfTheNextVersionKeepsTheValuesItLeavesOut(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let device = context.performAndWait {
            let device = context.object(with: id)
            expectEqual(device.string("address"), "AA:d0")
            return device
        }
        context.performAndWait { context.merge(partialUpdate(id, version: 2, values: ["name": .string("renamed")])) }
        context.performAndWait {
            expectFalse(device.isFault)
            expectEqual(device.version, 2)
            expectEqual(device.string("name"), "renamed")
            expectEqual(device.string("address"), "AA:d0")
            expectFalse(device.hasChanges)
        }
    }

    @Test(arguments: StoreFactory.all)
    func aPartialSnapshotThatSkipsAVersionTurnsTheObjectIntoAFault(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let id = try fixture.seedDevices(1)[0]
        let context = fixture.makeContext()
        let device = context.performAndWait {
            let device = context.object(with: id)
            expectEqual(device.version, 1)
            return device
        }
        // Version 2 was missed: the values the snapshot leaves out may be stale, so they are not kept.
        context.performAndWait { context.merge(partialUpdate(id, version: 3, values: ["name": .string("renamed")])) }
        context.performAndWait {
            expectTrue(device.isFault)
            // The fault loads the store's state (still version 1 here: the change set was made up).
            expectEqual(device.string("address"), "AA:d0")
            expectEqual(device.version, 1)
        }
    }
}
