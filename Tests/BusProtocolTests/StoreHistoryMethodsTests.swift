import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

struct StoreHistoryMethodsTests {
    @Test func historyParamsMatchTheProtocolExample() throws {
        let example = json(#"{"since":1200,"limit":100}"#)
        try expectEqual(HistoryParams(json: example), HistoryParams(since: 1200, limit: 100))
        expectEqual(HistoryParams(since: 1200, limit: 100).json, example)
        expectEqual(try HistoryParams(json: json("{}")), HistoryParams(since: 0, limit: nil))
        expectEqual(invalidField { () throws(RPCError) in _ = try HistoryParams(json: json(#"{"limit":0}"#)) }, "limit")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try HistoryParams(json: json(#"{"since":-5}"#)) }, "since")
    }

    @Test func historyResultMatchesTheProtocolFieldForField() throws {
        let example = json(
            #"{"transactions":[{"txn":1201,"time":"2026-11-21T23:55:20.123Z","author":null,"inserted":["Reading/13"],"updated":["Device/1"],"deleted":[]}]}"#
        )
        let result = try HistoryResult(json: example)
        let transaction = try #require(result.transactions.first)
        expectEqual(transaction.txn, 1201)
        expectLessThan(abs(transaction.time.timeIntervalSince1970 - 1_795_305_320.123), 0.0005)
        expectNil(transaction.author)
        expectEqual(transaction.inserted, [ObjectID(entity: "Reading", number: 13)])
        expectEqual(result.json, example)
        let badTime = #"{"transactions":[{"txn":1,"time":"yesterday","inserted":[],"updated":[],"deleted":[]}]}"#
        expectEqual(
            invalidField { () throws(RPCError) in _ = try HistoryResult(json: json(badTime)) }, "transactions[0].time")
    }

    @Test func statsKeepTheKnownCountersAndAnyOthers() throws {
        let example = json(
            #"{"connections":2,"subscriptions":5,"commits":120,"saves":180,"groupSizes":{"1":80,"2":20},"history":{"oldest":1,"newest":120},"uptimeSeconds":12}"#
        )
        let stats = try StatsResult(json: example)
        expectEqual(stats.connections, 2)
        expectEqual(stats.saves, 180)
        expectEqual(stats.groupSizes, [1: 80, 2: 20])
        expectEqual(stats.historyOldest, 1)
        expectEqual(stats.historyNewest, 120)
        expectEqual(stats.other, ["uptimeSeconds": .int(12)])
        expectEqual(stats.json, example)
        expectEqual(
            invalidField { () throws(RPCError) in _ = try StatsResult(json: json(#"{"connections":1}"#)) },
            "subscriptions")
    }
}
