import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import storesvc

/// The to-many arrays in a transaction's events are the members as of that transaction, even when later
/// transactions have committed by the time the hub delivers it (issue 5). A `DeliveryGate` holds the store's
/// observer queue on the transaction under test while later ones commit, so the race happens every time.
struct SubscriptionHubToManyAsOfTransactionTests {
    /// Subscribes on `hub`, activates, and waits until the subscription is live.
    private func liveSubscription(
        _ params: SubscribeParams, on hub: SubscriptionHub, connection: RecordingConnection
    ) throws {
        let result = try hub.subscribe(params, connection: connection)
        hub.activate(result.subscription)
        expectTrue(eventually { hub.phase(of: result.subscription) == .live })
    }

    /// The `readings` array of the device's update in each event, in order.
    private func readingsArrays(in events: [ChangedEvent], of device: ObjectID) -> [JSONValue?] {
        events.compactMap { event in event.updated.first { $0.id == device } }.map { $0.values["readings"] }
    }

    private func array(_ ids: [ObjectID]) -> JSONValue { .array(ids.map(\.jsonValue)) }

    @Test(arguments: HubTestStore.Kind.allCases)
    func aDeviceEnteringWhileALaterReadingCommitsIsInsertedWithTheReadingsOfItsOwnTransaction(
        kind: HubTestStore.Kind
    ) throws {
        let fixture = try HubTestStore(kind)
        let store = fixture.store
        let device = try store.insertDevice("AA", name: "lamp")
        let readings = try (1...3).map { try store.insertReading(device: device, value: UInt8($0)) }
        let gate = DeliveryGate(store: store, holding: store.lastTransaction + 1)
        defer { gate.open() }
        let hub = SubscriptionHub(store: store, log: .silent)
        defer { hub.stop() }
        let connection = RecordingConnection()
        try liveSubscription(
            SubscribeParams(entity: "Device", predicate: "name BEGINSWITH 'th'", toMany: .changes), on: hub,
            connection: connection)
        _ = try store.save(SaveRequest(updates: [.init(id: device, version: nil, values: ["name": .string("thermo")])]))
        // Commits while the rename's delivery is held: the hub delivers the rename with a fourth reading stored.
        let fourth = try store.insertReading(device: device, value: 4)
        gate.open()
        fixture.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 2 })
        let events = connection.changedEvents
        expectEqual(events.first?.inserted.first?.values["readings"], array(readings))
        expectEqual(events.last?.updated.first?.toManyChanges, ["readings": ToManyChange(added: [fourth])])
    }

    @Test(arguments: HubTestStore.Kind.allCases)
    func aValuesSubscriberGetsEachTransactionsOwnArrayWhenLaterOnesHaveCommitted(kind: HubTestStore.Kind) throws {
        let fixture = try HubTestStore(kind)
        let store = fixture.store
        let device = try store.insertDevice("AA")
        let gate = DeliveryGate(store: store, holding: store.lastTransaction + 1)
        defer { gate.open() }
        let hub = SubscriptionHub(store: store, log: .silent)
        defer { hub.stop() }
        let connection = RecordingConnection()
        try liveSubscription(SubscribeParams(entity: "Device"), on: hub, connection: connection)
        let readings = try (1...3).map { try store.insertReading(device: device, value: UInt8($0)) }
        gate.open()
        fixture.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 3 })
        expectEqual(
            readingsArrays(in: connection.changedEvents, of: device),
            [
                array(Array(readings[..<1])), array(Array(readings[..<2])), array(readings),
            ])
    }

    @Test(arguments: HubTestStore.Kind.allCases)
    func aDeviceDeletedBeforeItsEarlierTransactionIsDeliveredStillGetsThatTransactionsArray(
        kind: HubTestStore.Kind
    ) throws {
        let fixture = try HubTestStore(kind)
        let store = fixture.store
        let device = try store.insertDevice("AA")
        let first = try store.insertReading(device: device, value: 1)
        let gate = DeliveryGate(store: store, holding: store.lastTransaction + 1)
        defer { gate.open() }
        let hub = SubscriptionHub(store: store, log: .silent)
        defer { hub.stop() }
        let connection = RecordingConnection()
        try liveSubscription(SubscribeParams(entity: "Device"), on: hub, connection: connection)
        let second = try store.insertReading(device: device, value: 2)
        _ = try store.save(SaveRequest(deletes: [.init(id: device, version: nil)]))
        gate.open()
        fixture.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 2 })
        let events = connection.changedEvents
        expectEqual(readingsArrays(in: events, of: device), [array([first, second])])
        expectEqual(events.last?.deleted, [device])
        expectNil(connection.closeReason)
    }

    @Test(arguments: HubTestStore.Kind.allCases)
    func aReplayGivesEachTransactionsOwnArray(kind: HubTestStore.Kind) throws {
        let fixture = try HubTestStore(kind)
        let store = fixture.store
        let device = try store.insertDevice("AA")
        let readings = try (1...3).map { try store.insertReading(device: device, value: UInt8($0)) }
        let hub = SubscriptionHub(store: store, log: .silent, replayPageSize: 2)
        defer { hub.stop() }
        let connection = RecordingConnection()
        try liveSubscription(SubscribeParams(entity: "Device", since: 1), on: hub, connection: connection)
        expectTrue(connection.wait { $0.changedEvents.count == 3 })
        expectEqual(connection.changedEvents.map(\.txn), [2, 3, 4])
        expectEqual(
            readingsArrays(in: connection.changedEvents, of: device),
            [
                array(Array(readings[..<1])), array(Array(readings[..<2])), array(readings),
            ])
    }

    @Test(arguments: HubTestStore.Kind.allCases)
    func aDeliveryLaggingBeyondTheHistoryClosesTheSubscriptionsThatNeedArraysAndTheOthersGoOn(
        kind: HubTestStore.Kind
    ) throws {
        let fixture = try HubTestStore(kind, historyRetention: 10)
        let store = fixture.store
        let device = try store.insertDevice("AA")
        let gate = DeliveryGate(store: store, holding: store.lastTransaction + 1)
        defer { gate.open() }
        let hub = SubscriptionHub(store: store, log: .silent)
        defer { hub.stop() }
        let needsArrays = RecordingConnection(id: 1)
        let changesOnly = RecordingConnection(id: 2)
        try liveSubscription(SubscribeParams(entity: "Device"), on: hub, connection: needsArrays)
        try liveSubscription(SubscribeParams(entity: "Device", toMany: .changes), on: hub, connection: changesOnly)
        for i in 0..<40 { try store.insertReading(device: device, value: UInt8(i)) }
        gate.open()
        fixture.waitForObservers()
        expectTrue(changesOnly.wait { $0.changedEvents.count == 40 })
        expectEqual(needsArrays.changedEvents.count, 0)
        expectNotNil(needsArrays.closeReason)
        expectEqual(hub.count, 1)
        expectNil(changesOnly.closeReason)
    }
}

/// The store a hub under test runs against: SQLite (in a temporary directory) or in memory.
final class HubTestStore: Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case sqlite, inMemory
        var testDescription: String { rawValue }
    }

    let store: any PersistentStore
    private let sqlite: TemporarySQLiteStore?

    init(_ kind: Kind, historyRetention: Int = 100_000) throws {
        switch kind {
        case .sqlite:
            let fixture = try TemporarySQLiteStore(historyRetention: historyRetention)
            sqlite = fixture
            store = fixture.store
        case .inMemory:
            sqlite = nil
            store = InMemoryStore(model: .deviceReadings, historyRetention: historyRetention)
        }
    }

    /// Waits until every change set committed so far has been delivered to the store's observers.
    func waitForObservers() {
        if let sqlite {
            sqlite.store.waitForObservers()
        } else {
            (store as? InMemoryStore)?.waitForObservers()
        }
    }
}

/// Holds the store's observer queue when it delivers transaction `held`, until `open()`: observers registered
/// after the gate (a hub) get that transaction only once the transactions committed meanwhile are in the store.
///
/// The wait happens on the store's observer queue, never on a test's thread.
final class DeliveryGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let isOpen = Locked(false)
    private let observation: StoreObservation

    init(store: any PersistentStore, holding held: Int64) {
        let (semaphore, isOpen) = (semaphore, isOpen)
        observation = store.observeChanges { changes in
            guard changes.txn == held, !isOpen.withLock({ $0 }) else { return }
            semaphore.wait()
        }
    }

    /// Lets the held delivery go on (once; later calls do nothing).
    func open() {
        let wasOpen = isOpen.withLock { isOpen in
            defer { isOpen = true }
            return isOpen
        }
        if !wasOpen { semaphore.signal() }
    }

    deinit { observation.cancel() }
}
