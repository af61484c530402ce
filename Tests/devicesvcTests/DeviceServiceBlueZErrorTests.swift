import Foundation
import TestSupport
import Testing

@testable import ContextBusWire
@testable import devicesvc

/// Every error reply BlueZ gives to the GATT and device calls of a chain, injected one at a time into the simulated
/// BlueZ: each chain ends with 502 carrying BlueZ's name and message, later steps are never called, the device is
/// disconnected, and the device's queue goes on with the next chain.
@Suite(.serialized, .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"))
struct DeviceServiceBlueZErrorTests {
    static let device = BluetoothAddress("AA:BB:CC:DD:EE:01")!
    static let battery = BluetoothUUID("2a19")!
    static let echoIn = BluetoothUUID("c0defeed-0001-4000-8000-000000000000")!

    /// The errors `org.bluez.GattCharacteristic1` documents for `ReadValue` / `WriteValue` / `StartNotify`, and
    /// `org.bluez.Device1.Connect`'s, that are not transient (transient ones are retried: tested elsewhere).
    static let failures: [(method: String, error: String, step: Int)] = [
        ("ReadValue", "org.bluez.Error.Failed", 1),
        ("ReadValue", "org.bluez.Error.NotPermitted", 1),
        ("ReadValue", "org.bluez.Error.NotAuthorized", 1),
        ("ReadValue", "org.bluez.Error.InvalidOffset", 1),
        ("ReadValue", "org.bluez.Error.NotSupported", 1),
        ("WriteValue", "org.bluez.Error.InvalidValueLength", 2),
        ("WriteValue", "org.bluez.Error.NotPermitted", 2),
        ("WriteValue", "org.bluez.Error.NotAuthorized", 2),
        ("WriteValue", "org.bluez.Error.NotSupported", 2),
        ("StartNotify", "org.bluez.Error.NotPermitted", 3),
        ("StartNotify", "org.bluez.Error.NotSupported", 3),
        ("Connect", "org.bluez.Error.NotReady", 0),
        ("Connect", "org.bluez.Error.Failed", 0),
    ]

    static let chain: [ChainStep] = [
        .connect(timeoutMs: nil), .read(characteristic: battery, timeoutMs: nil),
        .write(characteristic: echoIn, value: Data([1]), response: true, timeoutMs: nil),
        .notify(characteristic: battery, count: 1, timeoutMs: nil), .disconnect,
    ]

    @Test func eachErrorEndsItsChainWith502AndTheDeviceQueueGoesOn() async throws {
        try await withSimulatedStack(simulatorOptions: ["--timing", "notify_ms=20"]) { stack in
            for failure in Self.failures {
                try await stack.simulator.fail(
                    Self.device.string, failure.method, with: failure.error, message: "injected \(failure.error)")
                try await stack.simulator.clearCallLog()
                let outcome = await stack.service.run(RunParams(address: Self.device, steps: Self.chain))
                guard case .failure(let error) = outcome else {
                    Issue.record("\(failure.method) \(failure.error): the chain succeeded")
                    continue
                }
                expectEqual(error.code, .deviceError, "\(failure.method) \(failure.error)")
                expectTrue(error.message.contains("injected \(failure.error)"), "\(error.message)")
                let reported = try #require(error.chainFailure)
                expectEqual(reported.step, failure.step, "\(failure.method) \(failure.error)")
                expectEqual(reported.bluez, failure.error)
                let calls = try await callsForTheDevice(stack.simulator)
                let laterSteps = ["ReadValue", "WriteValue", "StartNotify"].dropFirst(failure.step)
                expectTrue(
                    laterSteps.allSatisfy { !calls.contains($0) }, "\(failure.method) \(failure.error): \(calls)")
                if failure.step > 0 {
                    expectEqual(calls.last, "Disconnect", "\(failure.method) \(failure.error): \(calls)")
                }

                // The next chain on the same device runs whole.
                let next = await stack.service.run(RunParams(address: Self.device, steps: Self.chain))
                expectEqual(
                    (try? next.get().run.results.count), Self.chain.count,
                    "after \(failure.method) \(failure.error): \(next)")
            }
        }
    }

    /// The chain calls the simulator saw for the device (property reads and introspection left out).
    private func callsForTheDevice(_ simulator: BlueZSimulator) async throws -> [String] {
        let ignored: Set<String> = ["Get", "GetAll", "GetManagedObjects", "Introspect"]
        return try await simulator.callLog().filter { $0.address == Self.device.string && !ignored.contains($0.method) }
            .map(\.method)
    }
}
