import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// The stack's promise: a long import on a worker never holds up the main context. 3,000
/// readings are saved in batches of 500 through worker → root → SQLite while a ticker on the
/// main queue records how late it runs. The figures are printed, not asserted (timing on a
/// shared machine would flake); the assertions check that everything arrived and that main kept
/// ticking. `scripts/bench stack` measures the same import at 100,000 readings in a release build.
/// (10,000 readings until session 9: 26 s of CPU under each sanitizer for the same assertions.)
struct WorkerImportStallTests {
    static let objects = 3_000
    static let batch = 500

    @Test func aLongWorkerImportLeavesTheMainQueueFree() throws {
        _ = testMainQueue
        let testStore = try StoreFactory.sqlite.make(.deviceReadings)
        let stack = ContextStack(store: testStore, configuration: .init(rootSaveDelay: .milliseconds(50)))
        let failures = Collected<String>()
        let watching = stack.saveErrors.startWithValues { failures.append($0.description) }
        defer { watching.dispose() }
        // Main shows a device while the import runs.
        let deviceID = try stack.main.performAndWait {
            let device = stack.main.makeDevice("importing")
            try stack.main.save()
            return device.objectID
        }
        try stack.saveRoot()
        let mainDevice = stack.main.performAndWait { stack.main.object(with: deviceID).string("name") }
        expectEqual(mainDevice, "importing")

        // The noise floor: the same ticker with nothing else running (the machine is shared).
        let meter = QueueStallMeter(queue: stack.main.queue)
        meter.start()
        Thread.sleep(forTimeInterval: 2)
        let idle = meter.stop()

        // The control: the same ticker on a queue nothing else uses, during the same import.
        let control = QueueStallMeter(queue: DispatchQueue(label: "control queue"))
        meter.start()
        control.start()
        let started = ContinuousClock.now
        for batch in 0..<(Self.objects / Self.batch) {
            let worker = stack.newWorker(name: "import")
            try worker.performAndWait {
                for i in 0..<Self.batch {
                    worker.makeReading(
                        device: nil, characteristic: "2a\(i % 100)", time: Double(batch * Self.batch + i))
                }
                try worker.save()
            }
        }
        try stack.saveRoot()
        let elapsed = ContinuousClock.now - started
        drain(stack.main)
        let report = meter.stop()
        let controlReport = control.stop()

        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "worker import of \(Self.objects) readings in batches of \(Self.batch): "
                + "\(Int(Double(Self.objects) / seconds)) objects/s; main queue \(report); "
                + "control queue during the import \(controlReport); idle main queue (noise floor) \(idle)")

        let stored = try testStore.fetch(FetchRequest(entity: "Reading", resultType: .count))
        expectEqual(stored.content, .count(Self.objects))
        expectEmpty(failures.all)
        expectGreaterThan(report.ticks, 0)
    }
}
