import Foundation
@preconcurrency import Glibc

extension DeviceBenchmark {
    /// Samples the CPU time (user + system, all threads) that a set of processes has used so far.
    struct CPUWatch {
        /// Each process by the name it is reported under.
        let processes: [(name: String, pid: pid_t)]

        init(_ processes: [(name: String, pid: pid_t)]) {
            self.processes = processes
        }

        /// Seconds of CPU per process name; a process that is gone counts as 0.
        func sample() -> [String: Double] {
            Dictionary(processes.map { ($0.name, ProcessCPUTime.seconds(of: $0.pid) ?? 0) }, uniquingKeysWith: +)
        }
    }
}
