import Foundation
import TestSupport
import Testing

@testable import ContextBusServer

/// `FrameFanOut` over a real `BusServer` (two loops) and raw peers: numbers, order, limits, overflow.
struct FrameFanOutTests {
    /// A `test.tick` event frame whose `value` is the spliced number.
    private func tickFrame(text: String = "t") -> NumberedFrame {
        NumberedFrame(
            prefix: Array(#"{"jsonrpc":"2.0","method":"test.tick","params":{"value":"#.utf8),
            suffix: Array(#","text":"\#(text)"}}"#.utf8))
    }

    /// Connects `count` greeted peers and returns each with its server-side connection.
    private func connect(_ count: Int, to bus: TestBus) throws -> [(peer: RawBusPeer, connection: BusConnection)] {
        var pairs: [(peer: RawBusPeer, connection: BusConnection)] = []
        for _ in 0..<count {
            let known = Set(bus.server.connections.map(\.id))
            let peer = try RawBusPeer(path: bus.socketPath)
            expectTrue(peer.greet())
            let connection = try #require(bus.server.connections.first { !known.contains($0.id) })
            pairs.append((peer, connection))
        }
        return pairs
    }

    @Test func everyRecipientGetsEveryFrameWithItsOwnNumberInOrderAfterWhatWasSentBefore() throws {
        let bus = try TestBus()
        let pairs = try connect(4, to: bus)
        expectEqual(Set(pairs.map { ObjectIdentifier($0.connection.loop) }).count, 2, "spread over both loops")
        let refused = Recorder<Int64>()
        let fanOut = FrameFanOut(method: TickEvent.method) { for recipient in $0 { refused.append(recipient.number) } }
        for (index, pair) in pairs.enumerated() {
            expectTrue(pair.connection.send(TickEvent(value: -1 - index, text: "before")))
        }
        let recipients = FrameFanOut.Recipients(
            pairs.enumerated().map { FrameFanOut.Recipient(connection: $1.connection, number: Int64($0) * 1000) })
        expectEqual(recipients.count, 4)
        let frames = 50
        for index in 0..<frames { fanOut.send(tickFrame(text: "f\(index)"), to: recipients) }
        for (index, pair) in pairs.enumerated() {
            let messages = (0...frames).compactMap { _ in pair.peer.readMessage() }
            expectEqual(messages.count, frames + 1)
            expectEqual(messages.first?["params"]?["text"], .string("before"))
            expectTrue(messages.dropFirst().allSatisfy { $0["params"]?["value"] == .int(Int64(index) * 1000) })
            expectEqual(messages.dropFirst().map { $0["params"]?["text"] }, (0..<frames).map { .string("f\($0)") })
        }
        expectEmpty(refused.all)
    }

    @Test func aFrameLargerThanMaxFrameIsRefusedAndReportedWhileTheConnectionStaysOpen() throws {
        let bus = try TestBus { $0.maxFrame = 200 }
        let pairs = try connect(2, to: bus)
        let refused = Recorder<Int64>()
        let fanOut = FrameFanOut(method: TickEvent.method) { for recipient in $0 { refused.append(recipient.number) } }
        let recipients = FrameFanOut.Recipients(
            pairs.enumerated().map { FrameFanOut.Recipient(connection: $1.connection, number: Int64($0)) })
        fanOut.send(tickFrame(text: String(repeating: "x", count: 300)), to: recipients)
        fanOut.send(tickFrame(text: "small"), to: recipients)
        for pair in pairs {
            expectEqual(pair.peer.readMessage()?["params"]?["text"], .string("small"))
        }
        expectTrue(refused.wait(forCount: 2))
        expectEqual(Set(refused.all), [0, 1])
        expectTrue(bus.handlerErrors.wait(forCount: 2))
        expectTrue(bus.handlerErrors.all.allSatisfy { $0.hasPrefix("test.tick:") })
        expectTrue(pairs.allSatisfy { $0.connection.isOpen })
    }

    @Test func aRecipientThatStopsReadingIsDroppedWithOverflowWhileTheOthersGetEveryFrame() throws {
        let bus = try TestBus {
            $0.maxOutbound = 64 * 1024
            $0.overflowGoodbyeTimeout = .seconds(20)  // the stalled peer gets time to read the goodbye
        }
        let pairs = try connect(3, to: bus)
        let stalled = pairs[0]
        let refused = Recorder<Int64>()
        let fanOut = FrameFanOut(method: TickEvent.method) { for recipient in $0 { refused.append(recipient.number) } }
        let recipients = FrameFanOut.Recipients(
            pairs.enumerated().map { FrameFanOut.Recipient(connection: $1.connection, number: Int64($0)) })
        let text = String(repeating: "x", count: 1000)
        // Far more than the stalled peer's socket buffers and queue hold; the lively ones read each frame before
        // the next is sent, so only the stalled one can fall behind.
        let frames = 2000
        for index in 0..<frames {
            fanOut.send(tickFrame(text: "\(index) \(text)"), to: recipients)
            for pair in pairs.dropFirst() {
                let message = pair.peer.readMessage()
                expectEqual(message?["params"]?["text"], .string("\(index) \(text)"))
                if message == nil { return }
            }
        }
        expectTrue(refused.wait(forCount: 1))
        expectTrue(refused.all.allSatisfy { $0 == 0 }, "only the stalled recipient is refused")
        let messages = stalled.peer.readToEnd()
        let ticks = messages.filter { $0["method"] == .string("test.tick") }
        expectTrue(ticks.count > 10 && ticks.count < frames)
        expectEqual(ticks.map { $0["params"]?["text"] }, (0..<ticks.count).map { .string("\($0) \(text)") })
        expectEqual(messages.last?["method"], .string("bus.overflow"))
        expectTrue(pairs.dropFirst().allSatisfy { $0.connection.isOpen })
    }

    @Test func framesForAConnectionThatClosedAreRefused() throws {
        let bus = try TestBus()
        let pairs = try connect(1, to: bus)
        let closed = Gate()
        pairs[0].connection.onClose { _ in closed.open() }
        pairs[0].connection.close()
        expectTrue(closed.wait())
        let refused = Recorder<Int64>()
        let fanOut = FrameFanOut(method: TickEvent.method) { for recipient in $0 { refused.append(recipient.number) } }
        fanOut.send(
            tickFrame(), to: FrameFanOut.Recipients([FrameFanOut.Recipient(connection: pairs[0].connection, number: 7)])
        )
        expectTrue(refused.wait(forCount: 1))
        expectEqual(refused.all, [7])
    }
}
