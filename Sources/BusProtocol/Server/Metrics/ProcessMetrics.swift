import Foundation

/// The standard process metrics of a Prometheus client library, read from `/proc/self`: resident memory, open
/// descriptors, CPU time, threads and the start time. The soak (`scripts/soak`) watches the first two level off.
package enum ProcessMetrics {
    /// When this process started (read once, when first asked).
    private static let startTime = Date().timeIntervalSince1970

    /// The families, as far as `/proc` could be read (a family that cannot be read is left out).
    package static func families() -> [MetricFamily] {
        var families: [MetricFamily] = []
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        if let kibibytes = field("VmRSS:", in: status) {
            families.append(
                .gauge("process_resident_memory_bytes", help: "Resident memory size in bytes.", value: kibibytes * 1024)
            )
        }
        if let threads = field("Threads:", in: status) {
            families.append(.gauge("process_threads", help: "Threads of the process.", value: threads))
        }
        if let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            // The listing's own descriptor is among them while it is read.
            families.append(
                .gauge("process_open_fds", help: "Open file descriptors.", value: Double(max(0, descriptors.count - 1)))
            )
        }
        if let seconds = processCPUSeconds() {
            families.append(
                MetricFamily(
                    name: "process_cpu_seconds_total", help: "User and system CPU time spent, in seconds.",
                    kind: .counter, samples: [MetricSample(value: seconds)]))
        }
        families.append(
            .gauge(
                "process_start_time_seconds", help: "When the process started, in seconds since the Unix epoch.",
                value: startTime))
        return families
    }

    /// Records the start time now (call at start-up, so that it is not the first scrape's time).
    package static func noteStart() { _ = startTime }

    /// The number after `name` on its line of `/proc/self/status` (`VmRSS:   12345 kB`).
    private static func field(_ name: String, in status: String) -> Double? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return nil }
        return line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Double($0) }
    }
}
