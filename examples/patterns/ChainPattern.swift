import ContextBus
import ContextBusClient
import Dispatch
import Foundation

/// Pattern 5, BLE chains through devicesvc composed with `flatMap`, serialized, ending in `first()` without a
/// deadlock.
///
/// Each device's chain (connect, read its battery, read or listen to the sensor it has, disconnect) is one
/// `device.run` with `record: true`, as a cold `Signal` (`BusClient.request`). `flatMap(.concat)` runs the chains one
/// after another (devicesvc also serialises the chains of one device), `collect()` gathers their results, and the
/// blocking `first()` waits for them on the demo's own thread, which none of the signal's schedulers is. Asked on
/// main's queue for a signal delivered on main's queue, `first()` refuses at once (`.wouldDeadlock`) instead of
/// hanging. devicesvc records each chain's readings in storesvc, and main (a context of this process) sees them.
struct ChainPattern {
    let stack: ContextStack
    let devices: BusClient

    /// One round's outcome.
    struct Round {
        var chains: Int
        var started: Date
    }

    func run(round: Int) throws -> Round {
        let started = Date()
        let listed = try listDevices()
        let client = devices
        let chains = Signal<DeviceInfo, RPCError>(values: listed)
            .flatMap(.concat) { device in  // the next chain starts when this one has answered
                let steps = Self.chain(for: device)
                return client.request(
                    DeviceRecordedRun.self, RunParams(address: device.address, steps: steps, record: true)
                )
                .map { result in Self.describe(result, of: device, steps: steps) }
            }
            .collect()
        switch chains.first() {  // blocks this thread, which the signal does not need
        case .success(let lines): for line in lines { say(line) }
        case .failure(let error): throw DemoFailure(description: "chains: \(error)")
        }
        if round == 1 {
            let main = stack.main
            let refused = main.performAndWait {
                Signal<Int, Never>(value: 1).deliver(on: main.scheduler).first()
            }
            let outcome: String
            switch refused {
            case .failure(.wouldDeadlock(let scheduler)): outcome = "refused (wouldDeadlock on \(scheduler))"
            case .success(let value): outcome = "returned \(value) (it must refuse)"
            case .failure(let error): outcome = "failed: \(error)"
            }
            say("patterns: chains: first() on main's queue for a signal delivered there: \(outcome), no deadlock")
        }
        return Round(chains: listed.count, started: started)
    }

    /// `device.list`, asked again while devicesvc answers 503 (BlueZ not on the bus yet, or its tree loading).
    private func listDevices() throws -> [DeviceInfo] {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                let found = try devices.callAndWait(DeviceList.self, ListParams()).devices
                if !found.isEmpty { return found }
            } catch let error as RPCError where error.code == .unavailable {
                // devicesvc is up, BlueZ not yet: try again.
            }
            guard ContinuousClock.now < deadline else {
                throw DemoFailure(description: "devicesvc lists no device after 60 s (is BlueZ running?)")
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    /// connect, read the battery (2a19), read the temperature (2a6e) of an environmental sensor or take two heart-rate
    /// measurements (2a37) of a heart-rate sensor, disconnect.
    static func chain(for device: DeviceInfo) -> [ChainStep] {
        let services = Set(device.services.map { String($0.canonical.prefix(8)) })
        var steps: [ChainStep] = [.connect(timeoutMs: nil), .read(characteristic: uuid("2a19"), timeoutMs: nil)]
        if services.contains("0000181a") { steps.append(.read(characteristic: uuid("2a6e"), timeoutMs: nil)) }
        if services.contains("0000180d") {
            steps.append(.notify(characteristic: uuid("2a37"), count: 2, timeoutMs: 5000))
        }
        steps.append(.disconnect)
        return steps
    }

    private static func uuid(_ text: String) -> BluetoothUUID { BluetoothUUID(text)! }

    /// `patterns: 5 chains: chain c-3 on AA:BB:CC:DD:EE:01 (Thermo-1): connect read:2a19 …: battery 87 %, …: recorded`.
    static func describe(_ result: RecordedRunResult, of device: DeviceInfo, steps: [ChainStep]) -> String {
        let operations = steps.map { step in
            step.json["characteristic"]?.stringValue.map { "\(step.operation.rawValue):\($0)" }
                ?? step.operation.rawValue
        }
        var decoded: [String] = []
        for entry in result.run.results {
            let numbers = entry.number.map { [$0] } ?? entry.numbers?.compactMap { $0 } ?? []
            let characteristic = steps[entry.step].json["characteristic"]?.stringValue ?? "?"
            for number in numbers {
                decoded.append("\(names[characteristic] ?? characteristic) \(text(number)) \(entry.unit ?? "")")
            }
        }
        let recording: String
        switch result.recording {
        case .none: recording = "NOT recorded: no recording outcome"
        case .some(let outcome): recording = outcome.error.map { "NOT recorded: \($0)" } ?? "recorded"
        }
        return "patterns: chains: chain \(result.run.chain) on \(device.address) (\(device.name ?? "?")): "
            + operations.joined(separator: " ") + ": " + decoded.joined(separator: ", ") + ": " + recording
    }

    private static let names = ["2a19": "battery", "2a6e": "temperature", "2a37": "heart rate"]

    /// 87, 21.5: whole numbers without a fraction.
    private static func text(_ number: Double) -> String {
        number == number.rounded() ? String(Int(number)) : String(number)
    }
}
