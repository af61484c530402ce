import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusSupport
import Dispatch
import Foundation

/// `scripts/bench stack`: a long worker import through a `ContextStack` (worker → root → SQLite,
/// background root saves) and how late a 1 ms ticker on the main context's queue runs meanwhile.
/// The idle row is the machine's noise floor: the same ticker with nothing else running. The
/// control columns come from the same ticker on a queue nothing else uses, during the same
/// import: main stalls beyond the control's are main's own work (merges), the rest is the CPU
/// being busy with the import.
enum StackBenchmark {
    static let objects = 100_000
    static let batch = 1_000

    static func run() throws {
        let mainQueue = DispatchQueue(label: "bench main queue")
        ObjectContext.mainQueue = mainQueue
        print(
            "stack benchmark: \(objects) readings in batches of \(batch), worker → root → SQLite, "
                + "\(ProcessInfo.processInfo.activeProcessorCount) CPUs; stalls of a 1 ms ticker on the main queue")
        var rows: [[String]] = []

        let idle = QueueStallMeter(queue: mainQueue)
        idle.start()
        Thread.sleep(forTimeInterval: 2)
        let floor = idle.stop()
        rows.append(["main queue idle, 2 s (noise floor)", "-", ms(floor.longest), ms(floor.p99), "-", "-"])

        let runs: [(String, Durability, Bool)] = [
            ("worker import, root saves durability disk", .disk, true),
            ("worker import, root saves durability memory", .memory, true),
            ("  same (memory), main not merging", .memory, false),
        ]
        for (label, durability, mainMerges) in runs {
            let run = try importRun(durability: durability, mainMerges: mainMerges, mainQueue: mainQueue)
            rows.append([
                label, String(format: "%.0f", run.rate),
                ms(run.main.longest), ms(run.main.p99), ms(run.control.longest), ms(run.control.p99),
            ])
        }
        printTable(
            [
                "workload", "import objects/s", "main longest stall", "main p99 stall", "control longest",
                "control p99",
            ], rows)
    }

    private static func importRun(
        durability: Durability, mainMerges: Bool, mainQueue: DispatchQueue
    ) throws -> (rate: Double, main: QueueStallMeter.Report, control: QueueStallMeter.Report) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-bench-stack-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(url: directory.appendingPathComponent("store.sqlite"), model: .deviceReadings)
        defer { store.close() }
        let stack = ContextStack(
            store: store, configuration: .init(rootSaveDelay: .milliseconds(50), durability: durability))
        stack.main.automaticallyMergesChanges = mainMerges
        let failures = Locked<[String]>([])
        let watching = stack.saveErrors.startWithValues { failure in
            failures.withLock { $0.append(failure.description) }
        }
        defer { watching.dispose() }

        let meter = QueueStallMeter(queue: stack.main.queue)
        let control = QueueStallMeter(queue: DispatchQueue(label: "bench control queue"))
        meter.start()
        control.start()
        let started = ContinuousClock.now
        for batchIndex in 0..<(objects / batch) {
            let worker = stack.newWorker(name: "import")
            try worker.performAndWait {
                for i in 0..<batch {
                    let n = batchIndex * batch + i
                    let reading = worker.insert(entity: "Reading")
                    reading["characteristic", as: String.self] = "2a\(n % 100)"
                    reading["value", as: Data.self] = Data([1, 2, 3, 4, 5, 6, 7, 8])
                    reading["time", as: Date.self] = Date(timeIntervalSince1970: Double(n))
                }
                try worker.save()
            }
        }
        try stack.saveRoot()
        let elapsed = ContinuousClock.now - started
        mainQueue.sync {}
        let report = meter.stop()
        let controlReport = control.stop()
        if let failure = failures.withLock({ $0.first }) { throw BenchFailure(message: failure) }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(objects) / seconds, report, controlReport)
    }

    private struct BenchFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    private static func ms(_ duration: Duration) -> String {
        QueueStallMeter.Report.milliseconds(duration)
    }

    private static func printTable(_ columns: [String], _ rows: [[String]]) {
        let widths = columns.indices.map { i in ([columns[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        print(line(columns))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { print(line(row)) }
    }
}
