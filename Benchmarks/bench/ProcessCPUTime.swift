import Foundation
@preconcurrency import Glibc

/// The CPU time (user + system) a process used from when this value was made to `elapsed()`, read from
/// `/proc/PID/stat`: less sensitive to other load on the machine than wall-clock latency.
struct ProcessCPUTime {
    let pid: pid_t
    private let start: Double?

    init(pid: pid_t) {
        self.pid = pid
        start = Self.seconds(of: pid)
    }

    /// CPU seconds used since `init`; nil when `/proc` could not be read.
    func elapsed() -> Double? {
        guard let start, let now = Self.seconds(of: pid) else { return nil }
        return now - start
    }

    /// utime + stime of `pid` in seconds (fields 14 and 15 of `/proc/PID/stat`, in clock ticks).
    static func seconds(of pid: pid_t) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the name start with field 3 (state); utime is field 14, stime field 15.
        let fields = text[text.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
