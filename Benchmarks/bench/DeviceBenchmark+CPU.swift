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
            Dictionary(processes.map { ($0.name, Self.cpuSeconds(of: $0.pid) ?? 0) }, uniquingKeysWith: +)
        }

        /// utime + stime from `/proc/PID/stat`, in seconds.
        static func cpuSeconds(of pid: pid_t) -> Double? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After "pid (comm)": state is field 3, utime 14 and stime 15 (1-based), in clock ticks.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }
    }
}
