import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import storesvc

/// `store.watch` and `store.results` (docs/protocol.md, "Live queries on the wire"): applying each event to the list
/// a client holds gives what a fresh `store.fetch` returns at the event's transaction.
struct StoreServiceWatchTests {
    /// A client's copy of a watch's list: IDs with their JSON values.
    struct ClientList: Equatable {
        var items: [(id: String, version: Int64, values: [String: JSONValue])]

        static func == (lhs: ClientList, rhs: ClientList) -> Bool {
            lhs.items.map(\.id) == rhs.items.map(\.id) && lhs.items.map(\.version) == rhs.items.map(\.version)
                && zip(lhs.items, rhs.items).allSatisfy { $0.values == $1.values }
        }

        init(objects: [JSONValue]) {
            items = objects.map { object in
                (
                    object["id"]?.stringValue ?? "?", object["version"]?.intValue ?? 0,
                    object["values"]?.objectValue ?? [:]
                )
            }
        }

        /// Applies a `store.results` event as the protocol says: removals (highest first), insertions (lowest first),
        /// then updates.
        mutating func apply(_ event: JSONValue) {
            for index in event["removed"]?.arrayValue ?? [] { items.remove(at: Int(index.intValue!)) }
            for insertion in event["inserted"]?.arrayValue ?? [] {
                let object = insertion["object"]!
                items.insert(
                    (object["id"]!.stringValue!, object["version"]!.intValue!, object["values"]?.objectValue ?? [:]),
                    at: Int(insertion["index"]!.intValue!))
            }
            for update in event["updated"]?.arrayValue ?? [] {
                let index = Int(update["index"]!.intValue!)
                items[index].version = update["version"]!.intValue!
                for (key, value) in update["values"]?.objectValue ?? [:] { items[index].values[key] = value }
            }
        }
    }

    private func fetch(_ connection: RawBusConnection, _ params: String) throws -> (txn: Int64, list: ClientList) {
        let answer = try connection.call(900, "store.fetch", params)
        guard answer["result"]?["txn"]?.intValue != nil else {
            Issue.record("store.fetch answered without a txn: \(answer)")
            return (-1, ClientList(objects: []))
        }
        return (
            answer["result"]?["txn"]?.intValue ?? -1,
            ClientList(objects: answer["result"]?["objects"]?.arrayValue ?? [])
        )
    }

    private func reading(_ n: Int, chain: String = "c") -> String {
        #"{"entity":"Reading","ref":"r\#(n)","values":{"characteristic":"2a19","value":"AQ==","time":"2024-05-01T10:\#(String(format: "%02d", n)):00.000Z","chain":"\#(chain)","device":"Device/1"}}"#
    }

    @Test(arguments: [
        #"{"entity":"Reading","sort":[{"key":"time","ascending":false}]}"#,
        #"{"entity":"Reading","where":"chain == 'keep'","sort":[{"key":"time"}],"limit":3}"#,
        #"{"entity":"Reading","where":"device.address == 'AA:01'","sort":[{"key":"chain"},{"key":"time"}],"offset":1}"#,
        #"{"entity":"Reading","where":"chain == 'keep'","sort":[{"key":"time","ascending":false}]}"#,
        #"{"entity":"Reading","sort":[{"key":"chain"},{"key":"time"}]}"#,
    ])
    func everyEventAppliedToTheListGivesTheFetchAtItsTransaction(watchParams: String) throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        _ = try writer.call(
            1, "store.save", #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:01"}}]}"#)
        let watcher = try RawBusConnection(path: service.socketPath)
        try watcher.hello()
        let watched = try watcher.call(1, "store.watch", watchParams)
        let watch = try #require(watched["result"]?["watch"])
        var list = ClientList(objects: watched["result"]?["objects"]?.arrayValue ?? [])
        var lastTxn = watched["result"]?["txn"]?.intValue ?? 0
        var random = SeededRandom(seed: 7)
        var next = 1
        var ids: [String] = []
        for step in 0..<40 {
            // A random change: insert, update (chain or time), delete, or a save the list does not care about.
            var save: String
            switch random.int(5) {
            case 0, 1:
                save = #"{"insert":[\#(reading(next, chain: random.coin() ? "keep" : "drop"))]}"#
                next += 1
            case 2 where !ids.isEmpty:
                let id = ids[random.int(ids.count)]
                save =
                    random.coin()
                    ? #"{"update":[{"id":"\#(id)","values":{"chain":"\#(random.coin() ? "keep" : "drop")"}}]}"#
                    : #"{"update":[{"id":"\#(id)","values":{"time":"2024-05-01T09:\#(String(format: "%02d", random.int(60))):00.000Z"}}]}"#
            case 3 where !ids.isEmpty:
                let id = ids.remove(at: random.int(ids.count))
                save = #"{"delete":[{"id":"\#(id)"}]}"#
            default:
                save = #"{"update":[{"id":"Device/1","values":{"name":"n\#(step)"}}]}"#
            }
            let saved = try writer.call(10 + step, "store.save", save)
            let txn = try #require(saved["result"]?["txn"]?.intValue, "\(saved)")
            for (_, id) in saved["result"]?["ids"]?.objectValue ?? [:] { ids.append(id.stringValue!) }
            let truth = try fetch(writer, watchParams)
            expectEqual(truth.txn, txn)
            // The events of this save (none when the list did not change) bring the copy to the truth.
            if list != truth.list {
                let event = try #require(try watcher.readMessage(), "no event for txn \(txn)")
                expectEqual(event["method"], .string("store.results"))
                expectEqual(event["params"]?["watch"], watch)
                let eventTxn = try #require(event["params"]?["txn"]?.intValue)
                expectTrue(eventTxn > lastTxn && eventTxn <= txn, "event txn \(eventTxn) after \(lastTxn), save \(txn)")
                lastTxn = eventTxn
                list.apply(event["params"]!)
            }
            expectEqual(list, truth.list, "step \(step), txn \(txn)")
        }
        // No event is left over: the next message is the ping's answer.
        expectEqual(try watcher.call(500, "bus.ping")["result"], .object([:]))
    }

    /// Saves sent without waiting for their answers commit in groups, faster than the hub can fetch: each
    /// transaction that changes the list still gets its own event, at its own txn, that brings the list to what a
    /// fetch after that transaction returns. The truth comes from a second service that runs the same saves one at a
    /// time and is fetched after each. Lists told from a fetch at a later transaction (an offset, key paths through
    /// relationships, a window an object leaves) and lists edited in place (Device, with its to-many `readings`).
    @Test(arguments: [
        #"{"entity":"Reading","where":"chain == 'keep'","sort":[{"key":"time"}],"offset":1,"limit":3}"#,
        #"{"entity":"Reading","where":"device.name == 'on'","sort":[{"key":"time","ascending":false}]}"#,
        #"{"entity":"Reading","sort":[{"key":"time"}],"limit":3}"#,
        #"{"entity":"Device","sort":[{"key":"name"}]}"#,
        #"{"entity":"Device","where":"readings.@count > 2","sort":[{"key":"address"}]}"#,
        #"{"entity":"Reading","sort":[{"key":"device.name"},{"key":"time"}],"limit":4}"#,
        #"{"entity":"Device","where":"ANY readings.chain == 'keep'","sort":[{"key":"address"}]}"#,
    ])
    func underLoadEachTransactionGetsItsOwnEventAtItsTransaction(watchParams: String) throws {
        let seed =
            #"{"insert":[{"entity":"Device","values":{"address":"AA:01","name":"on"}},{"entity":"Device","values":{"address":"AA:02","name":"off"}},{"entity":"Device","values":{"address":"AA:03"}}]}"#
        // The truth: the saves one at a time, each followed by a fetch.
        let serial = try StoreServiceProcess.start()
        defer { serial.destroy() }
        let reference = try RawBusConnection(path: serial.socketPath)
        try reference.hello()
        let seeded = try #require(reference.call(1, "store.save", seed)["result"]?["txn"]?.intValue)
        var truths = [(txn: seeded, list: try fetch(reference, watchParams).list)]
        var random = SeededRandom(seed: 23)
        var saves: [String] = []
        var readings: [String] = []
        for step in 0..<60 {
            let device = "Device/\(random.int(3) + 1)"
            let time = "2024-05-01T10:\(String(format: "%02d", random.int(60))):00.000Z"
            let chain = random.coin() ? "keep" : "drop"
            var save: String
            switch random.int(6) {
            case 0, 1:
                save =
                    #"{"insert":[{"entity":"Reading","values":{"characteristic":"2a19","value":"AQ==","time":"\#(time)","chain":"\#(chain)","device":"\#(device)"}}]}"#
            case 2 where !readings.isEmpty:
                let id = readings[random.int(readings.count)]
                let values = [#""chain":"\#(chain)""#, #""time":"\#(time)""#, #""device":"\#(device)""#]
                save = #"{"update":[{"id":"\#(id)","values":{\#(values[random.int(3)])}}]}"#
            case 3 where !readings.isEmpty:
                save = #"{"delete":[{"id":"\#(readings.remove(at: random.int(readings.count)))"}]}"#
            case 4:
                save = #"{"update":[{"id":"\#(device)","values":{"name":"\#(random.coin() ? "on" : "off")"}}]}"#
            default:
                save = #"{"update":[{"id":"\#(device)","values":{"connected":\#(random.coin())}}]}"#
            }
            let answer = try reference.call(10 + step, "store.save", save)
            let txn = try #require(answer["result"]?["txn"]?.intValue, "\(save): \(answer)")
            for (_, id) in answer["result"]?["ids"]?.objectValue ?? [:] { readings.append(id.stringValue!) }
            saves.append(save)
            truths.append((txn, try fetch(reference, watchParams).list))
        }

        // The same saves, sent at once to a service with a watch.
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        expectEqual(try writer.call(1, "store.save", seed)["result"]?["txn"]?.intValue, seeded)
        let watcher = try RawBusConnection(path: service.socketPath)
        try watcher.hello()
        let watched = try watcher.call(1, "store.watch", watchParams)
        var list = ClientList(objects: watched["result"]?["objects"]?.arrayValue ?? [])
        expectEqual(watched["result"]?["txn"]?.intValue, seeded)
        expectEqual(list, truths[0].list)
        for (step, save) in saves.enumerated() {
            try writer.writeFrame(#"{"jsonrpc":"2.0","id":\#(10 + step),"method":"store.save","params":\#(save)}"#)
        }
        var txns: [Int64] = []
        for _ in saves {
            let answer = try #require(try writer.readMessage())
            txns.append(answer["result"]?["txn"]?.intValue ?? -1)
        }
        expectEqual(txns, truths.dropFirst().map(\.txn), "the same saves commit as the same transactions")
        let changing = zip(truths, truths.dropFirst()).filter { $0.list != $1.list }.map(\.1)
        // Every event, up to the last changing transaction's (pings in between, until it has come).
        var events: [JSONValue] = []
        for ping in 0..<100 where events.last?["txn"]?.intValue != changing.last?.txn && !changing.isEmpty {
            try watcher.writeFrame(#"{"jsonrpc":"2.0","id":\#(1000 + ping),"method":"bus.ping","params":{}}"#)
            while let message = try watcher.readMessage(), message["method"] != nil {
                events.append(message["params"] ?? .null)
            }
            if events.last?["txn"]?.intValue != changing.last?.txn { usleep(50_000) }
        }
        expectEqual(events.map { $0["txn"]?.intValue ?? -1 }, changing.map(\.txn), "one event per changing txn")
        for (event, truth) in zip(events, changing) {
            list.apply(event)
            expectEqual(list, truth.list, "txn \(truth.txn)")
        }
        expectEqual(try watcher.call(2000, "bus.ping")["result"], .object([:]))
    }

    @Test func aBadWatchIsInvalidParamsAndUnwatchStopsTheEvents() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        let unknown = try connection.call(1, "store.watch", #"{"entity":"Gadget"}"#)
        expectEqual(unknown["error"]?["code"], .int(-32602))
        expectEqual(unknown["error"]?["data"]?["field"], .string("entity"))
        let badWhere = try connection.call(2, "store.watch", #"{"entity":"Device","where":"name =="}"#)
        expectEqual(badWhere["error"]?["data"]?["field"], .string("where"))
        let missing = try connection.call(3, "store.unwatch", #"{"watch":42}"#)
        expectEqual(missing["error"]?["code"], .int(404))
        let watched = try connection.call(4, "store.watch", #"{"entity":"Device"}"#)
        let watch = try #require(watched["result"]?["watch"]?.intValue)
        expectEqual(try connection.call(5, "store.unwatch", #"{"watch":\#(watch)}"#)["result"], .object([:]))
        _ = try connection.call(6, "store.save", #"{"insert":[{"entity":"Device","values":{"address":"AA:09"}}]}"#)
        // No store.results arrives: the next message is the ping's answer.
        expectEqual(try connection.call(7, "bus.ping")["result"], .object([:]))
        let stats = try connection.call(8, "store.stats")
        expectEqual(stats["result"]?["watches"], .int(0))
    }

    @Test func aWatcherThatStopsReadingIsDroppedAndTheServiceGoesOn() throws {
        let service = try StoreServiceProcess.start(arguments: ["--max-outbound", "4096"])
        defer { service.destroy() }
        let watcher = try RawBusConnection(path: service.socketPath)
        try watcher.hello()
        _ = try watcher.call(1, "store.watch", #"{"entity":"Device","sort":[{"key":"address"}]}"#)
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        let name = String(repeating: "x", count: 500)
        for i in 0..<200 {
            _ = try writer.call(
                i + 2, "store.save",
                #"{"insert":[{"entity":"Device","values":{"address":"A\#(i)","name":"\#(name)"}}]}"#)
        }
        let stats = try writer.call(300, "store.stats")
        expectEqual(stats["result"]?["watches"], .int(0))
        let count = try writer.call(301, "store.fetch", #"{"entity":"Device","result":"count"}"#)
        expectEqual(count["result"]?["count"], .int(200))
    }

    @Test func theDiffOfTwoListsAppliedToTheFirstGivesTheSecond() {
        var random = SeededRandom(seed: 99)
        for _ in 0..<300 {
            let pool = (1...12).map { ObjectID(entity: "Reading", number: Int64($0)) }
            func list() -> [ObjectSnapshot] {
                pool.shuffled(using: &random).prefix(random.int(10)).map {
                    ObjectSnapshot(id: $0, version: Int64(random.int(3)) + 1, values: ["v": .int(Int64(random.int(3)))])
                }
            }
            let (previous, next) = (list(), list())
            guard let event = WatchDiff.event(watch: 1, txn: 2, from: previous, to: next) else {
                expectEqual(previous, next)
                continue
            }
            var applied = previous
            for index in event.removed { applied.remove(at: index) }
            for insertion in event.inserted { applied.insert(insertion.object, at: insertion.index) }
            for update in event.updated {
                applied[update.index].version = update.version
                for (key, value) in update.values {
                    applied[update.index].values[key] = PropertyValue(json: value, type: .int)
                }
            }
            expectEqual(applied, next)
        }
    }

    @Test func aListEditedInPlaceIsTheSortedListAndItsEditGivesIt() {
        var random = SeededRandom(seed: 5)
        let sort = [ObjectSortDescriptor("v", ascending: false), ObjectSortDescriptor("w")]
        func precedes(_ lhs: ObjectSnapshot, _ rhs: ObjectSnapshot) -> Bool {
            for (key, ascending) in [("v", false), ("w", true)] {
                let order = PropertyValue.storageOrder(lhs.values[key] ?? .null, rhs.values[key] ?? .null)
                if order != 0 { return ascending ? order < 0 : order > 0 }
            }
            return lhs.id < rhs.id
        }
        for limit in [nil, 1, 4] {
            var fetched = 0
            for _ in 0..<40 {
                var truth: [ObjectID: ObjectSnapshot] = [:]
                var list = WatchedList(objects: [], sortDescriptors: sort, limit: limit)
                for _ in 0..<20 {
                    var changes: [(id: ObjectID, snapshot: ObjectSnapshot?)] = []
                    for number in Set((0..<random.int(4)).map { _ in Int64(random.int(15)) }) {
                        let id = ObjectID(entity: "Reading", number: number)
                        let version = (truth[id]?.version ?? 0) + 1
                        let values: [String: PropertyValue] = [
                            "v": random.int(4) == 0 ? .null : .int(Int64(random.int(3))),
                            "w": .string("\(random.int(3))"),
                        ]
                        changes.append(
                            (id, random.int(4) == 0 ? nil : ObjectSnapshot(id: id, version: version, values: values)))
                    }
                    let previous = list.objects
                    let edit = list.apply(changes)
                    for (id, snapshot) in changes { truth[id] = snapshot }
                    let sorted = Array(truth.values.sorted(by: precedes).prefix(limit ?? .max))
                    guard let edit else {
                        // A full window that lost an object: the hub fetches it again.
                        expectEqual(list.objects, previous)
                        fetched += 1
                        list = WatchedList(objects: sorted, sortDescriptors: sort, limit: limit)
                        continue
                    }
                    expectEqual(list.objects, sorted)
                    var applied = previous
                    for index in edit.removed { applied.remove(at: index) }
                    for insertion in edit.inserted { applied.insert(insertion.object, at: insertion.index) }
                    for update in edit.updated {
                        applied[update.index].version = update.version
                        for (key, value) in update.values {
                            applied[update.index].values[key] =
                                key == "v"
                                ? PropertyValue(json: value, type: .int) : PropertyValue(json: value, type: .string)
                        }
                    }
                    expectEqual(applied, sorted)
                }
            }
            // Without a limit nothing is fetched; with one, most transactions are still decided in memory.
            expectTrue(limit == nil ? fetched == 0 : fetched > 0 && fetched < 40 * 20, "\(fetched) fetches")
        }
        let ordered = (1...5).map {
            ObjectSnapshot(id: ObjectID(entity: "Reading", number: $0), version: 1, values: ["v": .int(9 - $0)])
        }
        expectTrue(WatchedList(objects: ordered, sortDescriptors: sort).isInOrder)
        let reversed = [
            ObjectSnapshot(
                id: ObjectID(entity: "Reading", number: 2), version: 1, values: ["v": .int(1), "w": .string("a")]),
            ObjectSnapshot(
                id: ObjectID(entity: "Reading", number: 1), version: 1, values: ["v": .int(2), "w": .string("a")]),
        ]
        expectFalse(WatchedList(objects: reversed, sortDescriptors: sort).isInOrder)
    }
}
