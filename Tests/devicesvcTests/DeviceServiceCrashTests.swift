import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusClient
@testable import ContextBusSupport
@testable import ContextBusWire
@testable import devicesvc

/// `kill -9` of a real `devicesvc` with chains in flight on the simulated BlueZ: every waiting client gets a clear
/// error (the connection was lost) instead of hanging, and a restarted service runs chains on the same devices,
/// which the simulator may still consider connected and notifying.
///
/// `CTXBUS_DEVICE_CRASH_ROUNDS` sets the rounds (default 3), `CTXBUS_CRASH_SEED` replays a printed seed.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceCrashTests {
    static let rounds = ProcessInfo.processInfo.environment["CTXBUS_DEVICE_CRASH_ROUNDS"].flatMap(Int.init) ?? 3
    /// The devices the simulator knows without a scan.
    static let devices = (1...3).map { BluetoothAddress("AA:BB:CC:DD:EE:0\($0)")! }
    static let battery = BluetoothUUID("2a19")!

    /// A chain long enough to be in flight when the kill comes: connect, read, three notifications, a wait.
    static let longChain: [ChainStep] = [
        .connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil),
        .notify(characteristic: battery, count: 3, timeoutMs: nil), .wait(ms: 300), .disconnect,
    ]

    @Test func chainsInFlightFailClearlyOnKillDashNineAndARestartedServiceRunsThemAgain() async throws {
        var seed = UInt64.random(in: 1...UInt64.max)
        if let text = ProcessInfo.processInfo.environment["CTXBUS_CRASH_SEED"], let given = UInt64(text) {
            seed = given
        }
        print("DeviceServiceCrashTests: seed \(seed), \(Self.rounds) rounds")
        var random = SeededRandom(seed: seed)
        let simulator = try await BlueZSimulator.start(["--timing", "notify_ms=20"])
        defer { simulator.stopNow() }
        for round in 0..<Self.rounds {
            let service = try await DeviceServiceProcess.start(
                bus: simulator.busAddress, in: simulator.directory, lifetimeSeconds: nil)
            defer { service.stop() }
            // The previous round's kill left devices connected (and notifying) in the simulator.
            for address in Self.devices {
                let outcome = await service.run(RunParams(address: address, steps: Self.longChain))
                #expect(throws: Never.self, "round \(round), \(address) after restart:\n\(service.log)") {
                    try outcome.get()
                }
            }
            let steps = Locked(0)
            let observation = service.client.events(StepEvent.self).startWithValues { _ in steps.withLock { $0 += 1 } }
            defer { observation.dispose() }
            let outcomes = Locked<[Result<RecordedRunResult, any Error>]>([])
            let chains = Task {
                await withTaskGroup(of: Void.self) { group in
                    for address in Self.devices {
                        for _ in 0..<2 {
                            group.addTask {
                                do {
                                    let result = try await service.client.call(
                                        DeviceRecordedRun.self, RunParams(address: address, steps: Self.longChain),
                                        timeout: .seconds(120))
                                    outcomes.withLock { $0.append(.success(result)) }
                                } catch {
                                    outcomes.withLock { $0.append(.failure(error)) }
                                }
                            }
                        }
                    }
                }
            }
            // Kill at a random point of the chains' progress: after the k-th of their 48 step events (8 per chain),
            // so that some are always still in flight (a readiness guard, not a timing check).
            let killAfter = Int.random(in: 1...20, using: &random)
            let deadline = ContinuousClock.now + .seconds(60)
            while steps.withLock({ $0 }) < killAfter, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            service.process.send(signal: SIGKILL)
            await chains.value
            let results = outcomes.withLock { $0 }
            expectEqual(results.count, Self.devices.count * 2)
            let failures = results.compactMap { result -> (any Error)? in
                if case .failure(let error) = result { return error }
                return nil
            }
            expectFalse(failures.isEmpty, "round \(round): no chain was in flight at the kill")
            for failure in failures {
                guard case .disconnected = failure as? BusClientError else {
                    Issue.record("round \(round): a chain in flight ended with \(failure), not a lost connection")
                    continue
                }
                expectEqual(BusClientError.rpcError(for: failure).code, .unavailable)
            }
        }
        let service = try await DeviceServiceProcess.start(bus: simulator.busAddress, in: simulator.directory)
        defer { service.stop() }
        for address in Self.devices {
            let outcome = await service.run(RunParams(address: address, steps: Self.longChain))
            #expect(throws: Never.self, "\(address) after the last restart:\n\(service.log)") { try outcome.get() }
        }
    }
}

/// A reproducible generator (SplitMix64) for the kill moments.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
