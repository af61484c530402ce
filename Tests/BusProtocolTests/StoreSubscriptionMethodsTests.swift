import BusProtocol
import Shared
import Testing

@Suite struct StoreSubscriptionMethodsTests {
    @Test func subscribeParamsMatchTheProtocolExample() throws {
        let params = try SubscribeParams(
            json: json(#"{"entity":"Reading","where":"value > $v","args":{"v":1},"since":1200}"#))
        #expect(params.entity == "Reading")
        #expect(params.predicate == "value > $v")
        #expect(params.arguments == ["v": .int(1)])
        #expect(params.since == 1200)
        #expect(params.json == json(#"{"entity":"Reading","where":"value > $v","args":{"v":1},"since":1200}"#))
        #expect(try SubscribeParams(json: json(#"{"args":{}}"#)) == SubscribeParams())
        #expect(SubscribeParams().json == .object([:]))
    }

    @Test func subscribeNamesTheFieldThatIsWrong() {
        #expect(
            invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"since":-1}"#)) } == "since")
        #expect(
            invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"entity":[]}"#)) } == "entity")
        #expect(invalidField { () throws(RPCError) in _ = try SubscribeParams(json: json(#"{"args":1}"#)) } == "args")
    }

    @Test func subscribeResultAndUnsubscribeMatchTheProtocol() throws {
        let result = json(#"{"subscription":7,"txn":1235}"#)
        #expect(try SubscribeResult(json: result) == SubscribeResult(subscription: 7, txn: 1235))
        #expect(SubscribeResult(subscription: 7, txn: 1235).json == result)
        #expect(try UnsubscribeParams(json: json(#"{"subscription":7}"#)).subscription == 7)
        #expect(invalidField { () throws(RPCError) in _ = try UnsubscribeParams(json: json("{}")) } == "subscription")
        #expect(StoreUnsubscribe.name == "store.unsubscribe")
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
        #expect(event.subscription == 7)
        #expect(event.txn == 1236)
        #expect(event.author == "devicesvc")
        #expect(event.inserted.map(\.id) == [ObjectID(entity: "Reading", number: 13)])
        #expect(event.inserted.first?.values["chain"] == .null)
        #expect(
            event.updated == [
                StoreObject(
                    id: ObjectID(entity: "Device", number: 1), version: 5,
                    values: ["readings": .array([.string("Reading/13")])])
            ])
        #expect(event.deleted == [ObjectID(entity: "Reading", number: 4)])
        #expect(event.json == example)
        let envelope = RPCEvent(event)
        #expect(envelope.method == "store.changed")
        #expect(try envelope.payload(as: ChangedEvent.self) == event)
    }

    @Test func changedEventWritesANullAuthor() {
        let event = ChangedEvent(subscription: 1, txn: 2, author: nil, inserted: [], updated: [], deleted: [])
        #expect(
            event.json == json(#"{"subscription":1,"txn":2,"author":null,"inserted":[],"updated":[],"deleted":[]}"#))
    }
}
