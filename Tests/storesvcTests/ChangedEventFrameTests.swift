import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusTransport
@testable import ContextBusWire
@testable import storesvc

struct ChangedEventFrameTests {
    private let device = ObjectID(entity: "Device", number: 1)
    private let reading = ObjectID(entity: "Reading", number: 5)

    private func changes() -> ChangeSet {
        ChangeSet(
            txn: 7, time: Date(), author: "writer \"quoted\" ✓",
            inserted: [
                ObjectSnapshot(
                    id: reading, version: 1,
                    values: [
                        "value": .binary(Data([0, 1, 2, 255])), "chain": .string("T=1;\n"),
                        "time": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
                        "characteristic": .string("2a19"),
                    ])
            ],
            updated: [
                ChangeSet.Update(
                    snapshot: ObjectSnapshot(
                        id: device, version: 3, values: ["address": .string("A"), "name": .string("new")]),
                    changedKeys: ["name"], previousValues: ["name": .string("old")])
            ],
            deleted: [
                ObjectSnapshot(id: ObjectID(entity: "Device", number: 9), version: 2, values: ["address": .string("Z")])
            ])
    }

    private func filter(_ entity: String?, _ predicate: String? = nil) throws -> SubscriptionFilter {
        try SubscriptionFilter(entity: entity, predicate: predicate, arguments: [:], model: .deviceReadings)
    }

    /// The spliced frame for `subscription` and the plain encoder's frame of the same event, as (header length,
    /// parsed payload) pairs.
    private func bothEncodings(
        of event: ChangedEvent, subscription: Int64
    ) throws -> (spliced: (Int, JSONValue), plain: (Int, JSONValue)) {
        var numbered = event
        numbered.subscription = subscription
        let spliced = try ChangedEventFrame(event).frame(for: subscription)
        let plain = try RPCEvent(numbered).encodeFrame()
        return (try Self.decode(spliced), try Self.decode(plain))
    }

    private static func decode(_ frame: [UInt8]) throws -> (Int, JSONValue) {
        let length = Int(frame[0]) << 24 | Int(frame[1]) << 16 | Int(frame[2]) << 8 | Int(frame[3])
        expectEqual(length, frame.count - Frame.headerLength)
        return (length, try JSONParser().parse(frame[Frame.headerLength...]))
    }

    @Test(arguments: [Int64(0), 1, 9, 10, 42, 99_999, Int64.max])
    func aSplicedFrameEqualsThePlainEncodingForEverySubscriptionNumber(subscription: Int64) throws {
        let event = try #require(try filter(nil).event(for: changes(), subscription: 0, lookup: { _ in nil }))
        let (spliced, plain) = try bothEncodings(of: event, subscription: subscription)
        expectEqual(spliced.0, plain.0)
        expectEqual(spliced.1, plain.1)
        expectEqual(
            spliced.1,
            RPCEvent(
                ChangedEvent(
                    subscription: subscription, txn: 7, author: event.author,
                    inserted: event.inserted, updated: event.updated, deleted: event.deleted)
            ).json)
    }

    @Test(
        arguments: [
            ("Device", nil), ("Reading", nil), ("Device", "name == 'new'"), ("Device", "name == 'old'"), (nil, nil),
        ] as [(String?, String?)])
    func aSplicedFrameEqualsThePlainEncodingForEveryFilter(entity: String?, predicate: String?) throws {
        let event = try #require(
            try filter(entity, predicate).event(for: changes(), subscription: 0, lookup: { _ in nil }))
        for subscription in [Int64(3), 1_000] {
            let (spliced, plain) = try bothEncodings(of: event, subscription: subscription)
            expectEqual(spliced.0, plain.0)
            expectEqual(spliced.1, plain.1)
        }
    }

    @Test func anEventWithoutAuthorOrObjectsEncodesNullAndEmptyArrays() throws {
        let event = ChangedEvent(subscription: 0, txn: 1, author: nil, inserted: [], updated: [], deleted: [])
        let frame = try ChangedEventFrame(event).frame(for: 5)
        let text = String(decoding: frame[Frame.headerLength...], as: UTF8.self)
        expectTrue(
            text == #"{"jsonrpc":"2.0","method":"store.changed","params":{"subscription":5,"txn":1,"author":null,"#
                + #""inserted":[],"updated":[],"deleted":[]}}"#)
        let (spliced, plain) = try bothEncodings(of: event, subscription: 5)
        expectEqual(spliced.1, plain.1)
    }

    @Test func aNonFiniteNumberIsAnEncodingErrorNotAFrame() throws {
        let event = ChangedEvent(
            subscription: 0, txn: 1, author: nil,
            inserted: [StoreObject(id: reading, version: 1, values: ["value": .double(.nan)])], updated: [],
            deleted: [])
        #expect(throws: JSONWriteError.self) { try ChangedEventFrame(event) }
    }
}
