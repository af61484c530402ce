import Foundation
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// PROTOCOL.md: chains for one device run in arrival order. Two connections each pipeline chains on one device (every
/// request written before the first answer), round after round, against the real `devicesvc` and the simulated BlueZ;
/// each connection's chains must run in the order it sent them (issue 29: its second chain sometimes ran first).
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceArrivalOrderTests {
    static let device = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let rounds = 20
    static let chainsPerConnection = 5
    static let chain: [ChainStep] = [.connect(timeoutMs: nil), .disconnect]

    /// What one connection sent and saw in one round.
    struct Round: Sendable {
        /// The chain of each request, in the order the requests were sent.
        var sent: [String]
        /// The chains in the order their steps ran.
        var ran: [String]
    }

    @Test func eachConnectionsPipelinedChainsOnOneDeviceRunInTheOrderTheyArrived() async throws {
        try await withSimulatedStack { stack in
            let other = try await stack.service.makeClient(name: "other")
            defer { other.close() }
            for round in 0..<Self.rounds {
                async let first = pipeline(from: stack.client)
                async let second = pipeline(from: other)
                for (name, seen) in try await [("first", first), ("second", second)] {
                    expectEqual(seen.ran, seen.sent, "round \(round), the \(name) connection's chains")
                }
            }
        }
    }

    /// Writes `chainsPerConnection` requests for chains on `device` on `client`, one after the other without waiting
    /// for an answer, then waits for every answer.
    func pipeline(from client: BusClient) async throws -> Round {
        let ran = Locked([String]())
        let observation = client.events(StepEvent.self).startWithValues { event in
            ran.withLock { if $0.last != event.chain { $0.append(event.chain) } }
        }
        defer { observation.dispose() }
        let (answers, answered) = AsyncStream.makeStream(of: (Int, Result<RecordedRunResult, RPCError>).self)
        var requests: [any Disposable] = []
        for index in 0..<Self.chainsPerConnection {
            // Starting the request writes it to the socket before `start` returns: the requests go out in this order.
            requests.append(
                client.request(DeviceRecordedRun.self, RunParams(address: Self.device, steps: Self.chain))
                    .start { event in
                        switch event {
                        case .value(let result): answered.yield((index, .success(result)))
                        case .failed(let error): answered.yield((index, .failure(error)))
                        case .completed, .interrupted: break
                        }
                    })
        }
        defer { for request in requests { request.dispose() } }
        var chains = [String?](repeating: nil, count: Self.chainsPerConnection)
        var received = 0
        for await (index, outcome) in answers {
            chains[index] = try outcome.get().run.chain
            received += 1
            if received == Self.chainsPerConnection { break }
        }
        return Round(sent: chains.compactMap { $0 }, ran: ran.withLock { $0 })
    }
}
