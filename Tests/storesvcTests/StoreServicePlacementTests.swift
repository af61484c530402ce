import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire
@testable import storesvc

/// Which `store.get` requests the event loop serves itself: a few IDs, and no to-many arrays to read.
struct StoreServicePlacementTests {
    private let model = Model.deviceReadings

    private func readings(_ count: Int) -> [ObjectID] {
        (1...count).map { ObjectID(entity: "Reading", number: Int64($0)) }
    }

    @Test func aGetOfAFewObjectsWithoutToManyRelationshipsRunsOnTheLoop() {
        expectTrue(StoreService.isSmallRead(GetParams(ids: readings(StoreService.loopReadLimit)), in: model))
    }

    @Test func aGetOfMoreIDsThanTheLimitGoesToTheHandlerQueue() {
        expectFalse(StoreService.isSmallRead(GetParams(ids: readings(StoreService.loopReadLimit + 1)), in: model))
        expectFalse(
            StoreService.isSmallRead(
                GetParams(ids: readings(StoreService.loopReadLimit + 1), toMany: .faults), in: model))
    }

    @Test func aGetThatReadsAToManyArrayGoesToTheHandlerQueueUnlessAskedAsFaults() {
        let ids = readings(2) + [ObjectID(entity: "Device", number: 1)]
        expectFalse(StoreService.isSmallRead(GetParams(ids: ids), in: model))
        expectTrue(StoreService.isSmallRead(GetParams(ids: ids, toMany: .faults), in: model))
    }
}
