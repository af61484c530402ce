import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusWire
@testable import storesvc

struct SubscriptionHubTests {
    let fixture: TemporarySQLiteStore
    let hub: SubscriptionHub
    var store: SQLiteStore { fixture.store }

    init() throws {
        fixture = try TemporarySQLiteStore(historyRetention: 5000)
        hub = SubscriptionHub(store: fixture.store, log: .silent, replayPageSize: 16)
    }

    /// Subscribes, activates, and waits until the subscription is live.
    private func liveSubscription(
        _ params: SubscribeParams = SubscribeParams(entity: "Device"), on connection: RecordingConnection
    ) throws -> SubscribeResult {
        let result = try hub.subscribe(params, connection: connection)
        hub.activate(result.subscription)
        expectTrue(eventually { hub.phase(of: result.subscription) == .live })
        return result
    }

    @Test func liveEventsFollowCommitsInTxnOrder() throws {
        let connection = RecordingConnection()
        let subscription = try liveSubscription(on: connection)
        expectEqual(subscription.txn, 0)
        for i in 0..<5 { try store.insertDevice("A\(i)", author: "t") }
        store.waitForObservers()
        let events = connection.changedEvents
        expectEqual(events.map(\.txn), [1, 2, 3, 4, 5])
        expectTrue(events.allSatisfy { $0.subscription == subscription.subscription && $0.inserted.count == 1 })
        expectEqual(events[0].inserted[0].values["address"], .string("A0"))
    }

    @Test func aDeviceUpdatedFromItsReadingsSideStillCarriesTheWholeReadingsArray() throws {
        let device = try store.insertDevice("AA")
        let connection = RecordingConnection()
        _ = try liveSubscription(on: connection)
        var readings: [ObjectID] = []
        for i in 0..<2 {
            let temporary = ObjectID(entity: "Reading", temporaryReference: "r")
            let values: [String: PropertyValue] = [
                "characteristic": .string("2a19"), "value": .binary(Data([UInt8(i)])),
                "time": .date(Date(timeIntervalSince1970: Double(i))), "device": .reference(device),
            ]
            let result = try store.save(SaveRequest(inserts: [.init(id: temporary, values: values)]))
            // The store's change set leaves the device's readings out; the event must not.
            expectNil(result.changes!.updated.first?.snapshot.values["readings"])
            readings.append(result.ids[temporary]!)
        }
        store.waitForObservers()
        let updated = connection.changedEvents.flatMap(\.updated)
        expectEqual(updated.map(\.id), [device, device])
        expectEqual(updated.last?.values, ["readings": .array(readings.map(\.jsonValue))])
    }

    @Test func nothingIsSentBeforeActivationAndNothingCommittedMeanwhileIsLost() throws {
        let connection = RecordingConnection()
        try store.insertDevice("before")
        let result = try hub.subscribe(SubscribeParams(entity: "Device"), connection: connection)
        expectEqual(result.txn, 1)
        try store.insertDevice("between")
        store.waitForObservers()
        expectEmpty(connection.changedEvents)
        hub.activate(result.subscription)
        expectTrue(connection.wait { $0.changedEvents.count == 1 })
        expectEqual(connection.changedEvents.map(\.txn), [2])
        expectTrue(eventually { hub.phase(of: result.subscription) == .live })
        try store.insertDevice("after")
        store.waitForObservers()
        expectEqual(connection.changedEvents.map(\.txn), [2, 3])
    }

    @Test func sinceReplaysHistoryThenLiveWithNoGapAndNoDuplicate() throws {
        for i in 0..<100 { try store.insertDevice("old\(i)") }
        let connection = RecordingConnection(isPaced: true)
        let result = try hub.subscribe(SubscribeParams(entity: "Device", since: 10), connection: connection)
        expectEqual(result.txn, 100)
        hub.activate(result.subscription)
        expectTrue(eventually { connection.heldSendCount == 1 })
        // The replay is stuck on its first event while more transactions commit and are
        // published live (to nobody: the subscription is still replaying).
        for i in 0..<30 { try store.insertDevice("new\(i)") }
        store.waitForObservers()
        expectEqual(hub.phase(of: result.subscription), .replaying)
        connection.releasePacedSends()
        expectTrue(connection.wait { $0.changedEvents.count == 120 })
        expectTrue(eventually { hub.phase(of: result.subscription) == .live })
        try store.insertDevice("live")
        store.waitForObservers()
        expectEqual(connection.changedEvents.map(\.txn), Array(11...131))
    }

    @Test func replayRacingConcurrentCommitsStillHasNoGapOrDuplicate() throws {
        for i in 0..<50 { try store.insertDevice("old\(i)") }
        let connection = RecordingConnection()
        let writer = DispatchGroup()
        DispatchQueue.global().async(group: writer) {
            for i in 0..<200 { _ = try? store.insertDevice("racing\(i)") }
        }
        let result = try hub.subscribe(SubscribeParams(entity: "Device", since: 0), connection: connection)
        hub.activate(result.subscription)
        writer.wait()
        store.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 250 })
        store.waitForObservers()
        expectEqual(connection.changedEvents.map(\.txn), Array(1...250))
    }

    @Test func sinceBeyondTheHistoryIsGone() throws {
        let small = try TemporarySQLiteStore(historyRetention: 10)
        for i in 0..<40 { try small.store.insertDevice("d\(i)") }
        let hub = SubscriptionHub(store: small.store, log: .silent)
        expectEqual(hub.count, 0)
        do {
            _ = try hub.subscribe(SubscribeParams(since: 0), connection: RecordingConnection())
            Issue.record("expected 410")
        } catch {
            expectEqual(error.code, .gone)
        }
        expectEqual(hub.count, 0)
        try expectEqual(hub.subscribe(SubscribeParams(since: 35), connection: RecordingConnection()).txn, 40)
    }

    @Test func aSubscriberThatCannotTakeMoreIsDroppedWhileOthersCarryOn() throws {
        let slow = RecordingConnection(id: 1)
        let fine = RecordingConnection(id: 2)
        _ = try liveSubscription(on: slow)
        _ = try liveSubscription(on: fine)
        slow.refuseSends()
        try store.insertDevice("x")
        try store.insertDevice("y")
        store.waitForObservers()
        expectEqual(fine.changedEvents.map(\.txn), [1, 2])
        expectEmpty(slow.changedEvents)
        expectEqual(hub.count, 1)
        expectEqual(hub.counters.subscribersDropped, 1)
    }

    @Test func unsubscribeStopsEventsAndOnlyTheOwnerMayUnsubscribe() throws {
        let connection = RecordingConnection(id: 7)
        let subscription = try liveSubscription(on: connection).subscription
        do {
            try hub.unsubscribe(subscription, connectionID: 8)
            Issue.record("another connection unsubscribed it")
        } catch {
            expectEqual(error.code, .notFound)
        }
        try hub.unsubscribe(subscription, connectionID: 7)
        try store.insertDevice("x")
        store.waitForObservers()
        expectEmpty(connection.changedEvents)
        #expect(throws: RPCError.self) { try hub.unsubscribe(subscription, connectionID: 7) }
    }

    @Test func aClosedConnectionLosesEverySubscription() throws {
        let connection = RecordingConnection(id: 3)
        let other = RecordingConnection(id: 4)
        _ = try liveSubscription(on: connection)
        _ = try liveSubscription(SubscribeParams(entity: "Reading"), on: connection)
        _ = try liveSubscription(on: other)
        hub.connectionClosed(3)
        expectEqual(hub.count, 1)
    }

    @Test func predicateSubscriptionsSeeObjectsEnterAndLeaveTheirSet() throws {
        let connection = RecordingConnection()
        _ = try liveSubscription(SubscribeParams(entity: "Device", predicate: "name BEGINSWITH 'th'"), on: connection)
        let device = try store.insertDevice("A", name: "lamp")
        func rename(_ name: String) throws {
            _ = try store.save(SaveRequest(updates: [.init(id: device, version: nil, values: ["name": .string(name)])]))
        }
        try rename("thermo")
        try rename("thermostat")
        try rename("lamp")
        _ = try store.save(SaveRequest(deletes: [.init(id: device, version: nil)]))
        store.waitForObservers()
        let events = connection.changedEvents
        expectEqual(events.map(\.txn), [2, 3, 4])
        expectEqual(events[0].inserted.map(\.id), [device])
        expectEqual(events[1].updated.map(\.values), [["name": .string("thermostat")]])
        expectEqual(events[2].deleted, [device])
    }

    @Test func fanOutReachesEverySubscriber() throws {
        let connections = (0..<100).map { RecordingConnection(id: UInt64($0)) }
        for connection in connections { _ = try liveSubscription(on: connection) }
        try store.insertDevice("broadcast")
        store.waitForObservers()
        expectTrue(connections.allSatisfy { $0.changedEvents.map(\.txn) == [1] })
        expectEqual(hub.counters.eventsSent, 100)
    }

    @Test func subscribersSharingAFilterEachGetTheirOwnNumberAndOtherFiltersTheirOwnEvent() throws {
        let all = (0..<3).map { RecordingConnection(id: UInt64($0)) }
        let named = (3..<5).map { RecordingConnection(id: UInt64($0)) }
        let readings = RecordingConnection(id: 9)
        let allIDs = try all.map { try liveSubscription(on: $0).subscription }
        let namedIDs = try named.map {
            try liveSubscription(SubscribeParams(entity: "Device", predicate: "name == 'lamp'"), on: $0).subscription
        }
        _ = try liveSubscription(SubscribeParams(entity: "Reading"), on: readings)
        let lamp = try store.insertDevice("A", name: "lamp")
        try store.insertDevice("B", name: "fan")
        store.waitForObservers()
        for (connection, id) in zip(all, allIDs) {
            expectEqual(connection.changedEvents.map(\.subscription), [id, id])
            expectEqual(connection.changedEvents.map(\.txn), [1, 2])
            expectEqual(connection.changedEvents.map { $0.inserted.count }, [1, 1])
        }
        for (connection, id) in zip(named, namedIDs) {
            expectEqual(connection.changedEvents.map(\.subscription), [id])
            expectEqual(connection.changedEvents.map { $0.inserted.map(\.id) }, [[lamp]])
            expectEqual(connection.changedEvents.first?.inserted.first?.values["name"], .string("lamp"))
        }
        expectEmpty(readings.changedEvents)
        expectEqual(hub.counters.eventsSent, 8)
    }

    // MARK: - "toMany":"changes"

    /// A hub on a store that counts object reads, with one live subscription.
    private func countingHub(
        _ params: SubscribeParams, connection: RecordingConnection
    ) throws -> (SubscriptionHub, CountingStore) {
        let counting = CountingStore(store)
        let hub = SubscriptionHub(store: counting, log: .silent)
        let result = try hub.subscribe(params, connection: connection)
        hub.activate(result.subscription)
        expectTrue(eventually { hub.phase(of: result.subscription) == .live })
        return (hub, counting)
    }

    @Test func aChangesSubscriberGetsReadingsAddedAndRemovedAndTheHubReadsNoToManySet() throws {
        let device = try store.insertDevice("AA")
        let connection = RecordingConnection()
        let (hub, counting) = try countingHub(
            SubscribeParams(entity: "Device", toMany: .changes), connection: connection)
        defer { hub.stop() }
        let first = try store.insertReading(device: device, value: 1)
        let second = try store.insertReading(device: device, value: 2)
        _ = try store.save(SaveRequest(deletes: [.init(id: first, version: nil)]))
        store.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 3 })
        let updated = connection.changedEvents.flatMap(\.updated)
        expectEqual(updated.map(\.id), [device, device, device])
        expectEqual(updated.map(\.version), [2, 3, 4])
        expectTrue(updated.allSatisfy { $0.values.isEmpty })
        expectEqual(
            updated.map { $0.toManyChanges["readings"] },
            [
                ToManyChange(added: [first]), ToManyChange(added: [second]), ToManyChange(removed: [first]),
            ])
        expectEmpty(counting.readIDs)
    }

    @Test func aValuesSubscriberMakesTheHubReadTheDevicesReadings() throws {
        // The counterpart of the test above: the same saves with the default mode read the device.
        let device = try store.insertDevice("AA")
        let connection = RecordingConnection()
        let (hub, counting) = try countingHub(SubscribeParams(entity: "Device"), connection: connection)
        defer { hub.stop() }
        let reading = try store.insertReading(device: device)
        store.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 1 })
        expectEqual(connection.changedEvents.first?.updated.first?.values, ["readings": .array([reading.jsonValue])])
        expectEqual(connection.changedEvents.first?.updated.first?.toManyChanges, [:])
        expectEqual(counting.readIDs, [device])
    }

    @Test func aDeviceThatComesToMatchIsInsertedWithItsWholeReadingsInChangesMode() throws {
        let device = try store.insertDevice("AA", name: "lamp")
        let readings = try (1...3).map { try store.insertReading(device: device, value: UInt8($0)) }
        let connection = RecordingConnection()
        let (hub, _) = try countingHub(
            SubscribeParams(entity: "Device", predicate: "name BEGINSWITH 'th'", toMany: .changes),
            connection: connection)
        defer { hub.stop() }
        _ = try store.save(SaveRequest(updates: [.init(id: device, version: nil, values: ["name": .string("thermo")])]))
        // The fourth reading is saved after that delivery here; with the delivery held while it commits, see
        // `SubscriptionHubToManyAsOfTransactionTests`.
        store.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 1 })
        let fourth = try store.insertReading(device: device, value: 4)
        store.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 2 })
        let events = connection.changedEvents
        // Entering S: every value, the whole set included (the subscriber knew nothing of the device).
        expectEqual(events.first?.inserted.first?.values["readings"], .array(readings.map(\.jsonValue)))
        expectEqual(events.first?.updated.isEmpty, true)
        // Staying in S: only what changed.
        expectEqual(events.last?.updated.first?.values, [:])
        expectEqual(events.last?.updated.first?.toManyChanges, ["readings": ToManyChange(added: [fourth])])
    }

    @Test func aMovedReadingIsRemovedFromOneDeviceAndAddedToTheOther() throws {
        let (lamp, thermo) = (try store.insertDevice("L"), try store.insertDevice("T"))
        let reading = try store.insertReading(device: lamp)
        let connection = RecordingConnection()
        let (hub, counting) = try countingHub(SubscribeParams(toMany: .changes), connection: connection)
        defer { hub.stop() }
        _ = try store.save(
            SaveRequest(updates: [.init(id: reading, version: nil, values: ["device": .reference(thermo)])]))
        store.waitForObservers()
        expectTrue(connection.wait { $0.changedEvents.count == 1 })
        let updated = Dictionary(
            (connection.changedEvents.first?.updated ?? []).map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        expectEqual(updated[reading]?.values, ["device": thermo.jsonValue])
        expectEqual(updated[lamp]?.toManyChanges, ["readings": ToManyChange(removed: [reading])])
        expectEqual(updated[thermo]?.toManyChanges, ["readings": ToManyChange(added: [reading])])
        expectEqual(updated[lamp]?.values, [:])
        expectEmpty(counting.readIDs)
    }
}
