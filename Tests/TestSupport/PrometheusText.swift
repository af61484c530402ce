import Foundation

/// A Prometheus text exposition as read by a real parser: `prometheus_client`'s, through
/// `scripts/metrics-parse.py` run by Debian's `/usr/bin/python3` (its `python3-prometheus-client` is installed by
/// `scripts/setup`). Tests compare the services' metrics with what their JSON methods answer.
public struct PrometheusText: Sendable {
    /// Family name → type (`counter`, `gauge`, `histogram`); a counter's family name is without `_total`, as the
    /// parser names it.
    public var families: [String: String]
    /// `name{label=value,…}` (labels sorted by name) → value; `+Inf` and `NaN` are left out.
    public var samples: [String: Double]

    /// Whether the parser can run here.
    public static var isAvailable: Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", "import prometheus_client.parser"]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Parses `text`.
    ///
    /// - Throws: `PrometheusTextError` with the parser's message when it rejects the text.
    public static func parse(_ text: String) throws -> PrometheusText {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/metrics-parse.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Written from another thread: a large text would fill the pipe while the parser's output is unread.
        let writer = Thread {
            input.fileHandleForWriting.write(Data(text.utf8))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let json = output.fileHandleForReading.readDataToEndOfFile()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PrometheusTextError(message: String(decoding: message, as: UTF8.self), text: text)
        }
        let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] ?? [:]
        var samples: [String: Double] = [:]
        for (key, value) in object["samples"] as? [String: Any] ?? [:] {
            if let number = value as? NSNumber { samples[key] = number.doubleValue }
        }
        return PrometheusText(families: object["families"] as? [String: String] ?? [:], samples: samples)
    }

    /// The value of the sample `name` with exactly `labels`.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        let key = labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        return samples["\(name){\(key)}"]
    }
}

/// The parser rejected an exposition.
public struct PrometheusTextError: Error, CustomStringConvertible {
    public var message: String
    public var text: String

    public var description: String { "prometheus_client rejected the exposition: \(message)\n\(text)" }
}
