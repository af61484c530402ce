import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

struct StoreSubscriptionMethodsTests {
    @Test func subscribeParamsMatchTheProtocolExample() throws {
        let params = try SubscribeParams(
            json: json(#"{"entity":"Reading","where":"value > $v","args":{"v":1},"since":1200}"#))
        expectEqual(params.entity, "Reading")
        expectEqual(params.predicate, "value > $v")
        expectEqual(params.arguments, ["v": .int(1)])
        expectEqual(params.since, 1200)
        expectEqual(params.json, json(#"{"entity":"Reading","where":"value > $v","args":{"v":1},"since":1200}"#))
        expectEqual(try SubscribeParams(json: json(#"{"args":{}}"#)), SubscribeParams())
        expectEqual(SubscribeParams().json, .object([:]))
    }

    @Test func subscribeNamesTheFieldThatIsWrong() {
        expectEqual(
            invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"since":-1}"#)) }, "since")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"entity":[]}"#)) }, "entity")
        expectEqual(invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"args":1}"#)) }, "args")
    }

    @Test func subscribeResultAndUnsubscribeMatchTheProtocol() throws {
        let result = json(#"{"subscription":7,"txn":1235}"#)
        try expectEqual(SubscribeResult(json: result), SubscribeResult(subscription: 7, txn: 1235))
        expectEqual(SubscribeResult(subscription: 7, txn: 1235).json, result)
        expectEqual(try UnsubscribeParams(json: json(#"{"subscription":7}"#)).subscription, 7)
        expectEqual(invalidField { () throws(RPCError) in _ = try UnsubscribeParams(json: json("{}")) }, "subscription")
        expectEqual(StoreUnsubscribe.name, "store.unsubscribe")
    }

    @Test func changedEventMatchesTheProtocolExampleFieldForField() throws {
        let example = json(
            #"""
            {"subscription":7,"txn":1236,"author":"devicesvc",
             "inserted":[{"id":"Reading/13","version":1,"values":{"characteristic":"2a19","value":"ZA==","time":"2026-01-02T03:04:05.000Z","chain":null,"device":"Device/1"}}],
             "updated":[{"id":"Device/1","version":5,"values":{"readings":["Reading/13"]}}],
             "deleted":["Reading/4"]}
            """#)
        let event = try ChangedEvent(json: example)
        expectEqual(event.subscription, 7)
        expectEqual(event.txn, 1236)
        expectEqual(event.author, "devicesvc")
        expectEqual(event.inserted.map(\.id), [ObjectID(entity: "Reading", number: 13)])
        expectEqual(event.inserted.first?.values["chain"], .null)
        expectEqual(
            event.updated,
            [
                StoreObject(
                    id: ObjectID(entity: "Device", number: 1), version: 5,
                    values: ["readings": .array([.string("Reading/13")])])
            ])
        expectEqual(event.deleted, [ObjectID(entity: "Reading", number: 4)])
        expectEqual(event.json, example)
        let envelope = RPCEvent(event)
        expectEqual(envelope.method, "store.changed")
        try expectEqual(envelope.payload(as: ChangedEvent.self), event)
    }

    @Test func changedEventWritesANullAuthor() {
        let event = ChangedEvent(subscription: 1, txn: 2, author: nil, inserted: [], updated: [], deleted: [])
        expectEqual(
            event.json, json(#"{"subscription":1,"txn":2,"author":null,"inserted":[],"updated":[],"deleted":[]}"#))
    }

    @Test func toManyChangesIsOptInAndRoundTrips() throws {
        expectEqual(try SubscribeParams(json: json("{}")).toMany, .values)
        expectEqual(try SubscribeParams(json: json(#"{"toMany":null}"#)).toMany, .values)
        let changes = try SubscribeParams(json: json(#"{"entity":"Device","toMany":"changes"}"#))
        expectEqual(changes, SubscribeParams(entity: "Device", toMany: .changes))
        expectEqual(changes.json, json(#"{"entity":"Device","toMany":"changes"}"#))
        expectEqual(SubscribeParams(toMany: .values).json, .object([:]))
        for bad in [#""arrays""#, "1", "false", #"{}"#] {
            expectEqual(
                invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"toMany":\#(bad)}"#)) },
                "toMany")
        }
        let entry = json(
            #"{"id":"Device/1","version":5,"values":{"name":"x"},"#
                + #""toManyChanges":{"readings":{"added":["Reading/13"],"removed":["Reading/2"]}}}"#)
        let object = try StoreObject(json: entry)
        expectEqual(object.values, ["name": .string("x")])
        expectEqual(
            object.toManyChanges,
            [
                "readings": ToManyChange(
                    added: [ObjectID(string: "Reading/13")!], removed: [ObjectID(string: "Reading/2")!])
            ])
        expectEqual(object.json, entry)
        // Without changes the member is not sent: entries of the default mode are unchanged.
        expectEqual(
            StoreObject(id: object.id, version: 5, values: [:]).json,
            json(#"{"id":"Device/1","version":5,"values":{}}"#))
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try StoreObject(
                    json: json(#"{"id":"Device/1","version":5,"toManyChanges":{"readings":{"added":[1]}}}"#))
            }, "toManyChanges.readings.added[0]")
    }
}
