import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusWire

/// `store.subscribe` against the real `storesvc` process.
struct StoreServiceSubscriptionTests {
    private func insertDevice(_ address: String, payload: Int = 0) -> String {
        let name = payload > 0 ? #","name":"\#(String(repeating: "x", count: payload))""# : ""
        return #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"\#(address)"\#(name)}}]}"#
    }

    @Test func everyOneOfAHundredSubscribersGetsEveryEvent() throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let subscribers = try (0..<100).map { _ in
            let connection = try RawBusConnection(path: service.socketPath)
            try connection.hello()
            let answer = try connection.call(1, "store.subscribe", #"{"entity":"Device"}"#)
            expectEqual(answer["result"]?["txn"], .int(0))
            return connection
        }
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        for i in 1...5 { _ = try writer.call(i, "store.save", insertDevice("D\(i)")) }
        for subscriber in subscribers {
            var txns: [Int64] = []
            while txns.count < 5, let event = try subscriber.readMessage() {
                if event["method"] == .string("store.changed"), let txn = event["params"]?["txn"]?.intValue {
                    txns.append(txn)
                }
            }
            expectEqual(txns, [1, 2, 3, 4, 5])
        }
        let stats = try writer.call(9, "store.stats")
        expectEqual(stats["result"]?["subscriptions"], .int(100))
        expectEqual(stats["result"]?["eventsSent"], .int(500))
    }

    /// What the blocking side of `aSubscriberThatStopsReadingIsDroppedWhileOthersCarryOn` saw.
    private struct StalledSubscriberRun: Sendable {
        /// Set when the lively reader fell behind (its count when it did).
        var readerStoppedAt: Int?
        var subscriptionsAfterTheSaves: JSONValue?
        var statsAfterTheSaves: JSONValue?
        var stalledConnectionClosed = false
        var stalledLeftovers: [JSONValue] = []
        var savedCount: JSONValue?
    }

    @Test func aSubscriberThatStopsReadingIsDroppedWhileOthersCarryOn() async throws {
        // Every blocking step (starting and stopping the process, raw sockets, polling) runs on a thread of its
        // own: the cooperative pool only runs the BusClient reader, which must keep reading for the test to mean
        // anything.
        let service = try await onOwnThread { try StoreServiceProcess.start(arguments: ["--max-outbound", "65536"]) }
        do {
            try await runStalledSubscriber(on: service)
        } catch {
            _ = try? await onOwnThread { service.destroy() }
            throw error
        }
        _ = try? await onOwnThread { service.destroy() }
    }

    private func runStalledSubscriber(on service: StoreServiceProcess) async throws {
        let stalled = try await onOwnThread { () throws -> RawBusConnection in
            let stalled = try RawBusConnection(path: service.socketPath, receiveBuffer: 4096)
            try stalled.hello()
            _ = try stalled.call(1, "store.subscribe", "{}")
            return stalled
        }
        let reader = try await service.client("reader")
        defer { reader.close() }
        let received = Locked<[Int64]>([])
        let events = reader.events(ChangedEvent.self).startWithValues { event in
            received.withLock { $0.append(event.txn) }
        }
        defer { events.dispose() }
        _ = try await reader.call(StoreSubscribe.self, SubscribeParams(entity: "Device"))
        let saves = 200
        let run = try await onOwnThread { () throws -> StalledSubscriberRun in
            var run = StalledSubscriberRun()
            let writer = try RawBusConnection(path: service.socketPath)
            try writer.hello()
            for i in 1...saves {
                // Live events are not paced (docs/protocol.md), so a reader more than `--max-outbound` plus a socket
                // buffer behind is dropped by right, which a busy machine can make of this process's reader. Keep
                // it within four events (~33 KB): the only subscriber that may be dropped is the one that does
                // not read.
                guard eventually(timeout: .seconds(60), { received.withLock { $0.count } >= i - 5 }) else {
                    run.readerStoppedAt = received.withLock { $0.count }
                    return run
                }
                _ = try writer.call(i, "store.save", insertDevice("D\(i)", payload: 8_000))
            }
            guard eventually(timeout: .seconds(60), { received.withLock { $0.count } >= saves }) else {
                run.readerStoppedAt = received.withLock { $0.count }
                return run
            }
            run.statsAfterTheSaves = try writer.call(saves + 1, "store.stats")["result"]
            // The stalled connection goes once its overflow goodbye is sent or times out.
            var probe = saves + 10
            run.stalledConnectionClosed = eventually(timeout: .seconds(60)) {
                probe += 1
                return (try? writer.call(probe, "store.stats"))?["result"]?["connections"] == .int(2)
            }
            run.stalledLeftovers = try stalled.readUntilClosed()
            run.savedCount = try writer.call(probe + 1, "store.fetch", #"{"entity":"Device","result":"count"}"#)[
                "result"]?["count"]
            return run
        }
        expectNil(run.readerStoppedAt, "the reader stopped receiving events")
        expectEqual(received.withLock { $0 }, (1...Int64(saves)).map { $0 })
        // The stalled subscription was dropped for overflow; the reader's is the one left.
        expectEqual(run.statsAfterTheSaves?["subscriptions"], .int(1))
        expectEqual(run.statsAfterTheSaves?["subscribersDropped"], .int(1))
        expectTrue(run.stalledConnectionClosed)
        // The stalled subscriber finds a prefix of its events (never one with a hole), then, best
        // effort, bus.overflow (it cannot arrive here: the goodbye times out because this peer
        // does not read), then the end.
        let changed = run.stalledLeftovers.filter { $0["method"] == .string("store.changed") }
        expectEqual(changed.compactMap { $0["params"]?["txn"]?.intValue }, (0..<Int64(changed.count)).map { $0 + 1 })
        expectLessThan(changed.count, saves)
        let overflow = run.stalledLeftovers.firstIndex { $0["method"] == .string("bus.overflow") }
        expectTrue(overflow == nil || overflow == run.stalledLeftovers.count - 1)
        expectEqual(run.savedCount, .int(Int64(saves)))
    }

    @Test func subscribeSinceReplaysWithNoGapAndNoDuplicateAcrossTheLiveBoundary() async throws {
        let service = try StoreServiceProcess.start()
        defer { service.destroy() }
        let writer = try RawBusConnection(path: service.socketPath)
        try writer.hello()
        for i in 1...300 { _ = try writer.call(i, "store.save", insertDevice("old\(i)")) }
        let racing = Thread.detachNewThreadWithResult {
            guard let connection = try? RawBusConnection(path: service.socketPath), (try? connection.hello()) != nil
            else { return }
            for i in 1...200 { _ = try? connection.call(i, "store.save", insertDevice("new\(i)")) }
        }
        let subscriber = try RawBusConnection(path: service.socketPath)
        try subscriber.hello()
        let answer = try subscriber.call(1, "store.subscribe", #"{"entity":"Device","since":20}"#)
        let startTxn = try #require(answer["result"]?["txn"]?.intValue)
        expectGreaterThanOrEqual(startTxn, 300)
        racing.wait()
        var txns: [Int64] = []
        while txns.count < 480, let event = try subscriber.readMessage() {
            if let txn = event["params"]?["txn"]?.intValue { txns.append(txn) }
        }
        expectEqual(txns, Array(21...500))
    }

    @Test func sinceOlderThanTheHistoryIsGone() throws {
        let service = try StoreServiceProcess.start(arguments: ["--history", "10"])
        defer { service.destroy() }
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        for i in 1...40 { _ = try connection.call(i, "store.save", insertDevice("D\(i)")) }
        let answer = try connection.call(50, "store.subscribe", #"{"since":1}"#)
        expectEqual(answer["error"]?["code"], .int(410))
        let history = try connection.call(51, "store.history", #"{"since":1}"#)
        expectEqual(history["error"]?["code"], .int(410))
    }
}
