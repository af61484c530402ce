/// The flags every service takes for running it like a service: log format, metrics file, test hooks.
///
/// ```swift
/// case "--log-level": configuration.logLevel = try flags.choice()
/// default:
///     guard try configuration.operations.read(flag, from: &flags) else { throw .unknownFlag(flag) }
/// ```
package struct OperationsOptions: Sendable, Equatable {
    /// `--log-format text|json`.
    package var logFormat: LogFormat = .text
    /// `--metrics-file PATH`: rewritten atomically every `metricsInterval` for node_exporter's textfile collector.
    package var metricsFile: String?
    /// `--metrics-interval SECONDS` (1–3600, default 15).
    package var metricsInterval: Int = 15
    /// `--test-hooks` (hidden; tests only): registers `test.wedgeEventLoop`.
    package var testHooks = false

    package init() {}

    /// The `--help` lines of these flags (not `--test-hooks`, which is for tests only).
    package static let usage = """
          --log-format FORMAT  text (default): "<service>: <level>: <message>" lines; json: one JSON object per
                               line (time, level, service, message and fields). On the systemd journal each
                               line starts with its syslog priority (<3> error … <7> debug).
          --metrics-file PATH  Rewrite PATH atomically with the service's metrics (Prometheus text format)
                               every --metrics-interval seconds, for node_exporter's textfile collector
                               (name it *.prom); removed when the service stops.
          --metrics-interval SECONDS
                               How often --metrics-file is rewritten, 1 to 3600 (default 15).
        """

    /// Reads `flag` if it is one of these, taking its value from `flags`.
    ///
    /// - Returns: `false` when `flag` is not one of these.
    /// - Throws: `ConfigurationError` for a bad value.
    package mutating func read(_ flag: String, from flags: inout FlagReader) throws(ConfigurationError) -> Bool {
        switch flag {
        case "--log-format": logFormat = try flags.choice()
        case "--metrics-file": metricsFile = try flags.nonEmpty(expected: "a path")
        case "--metrics-interval": metricsInterval = try flags.integer(in: 1...3600)
        case "--test-hooks": testHooks = true
        default: return false
        }
        return true
    }
}
