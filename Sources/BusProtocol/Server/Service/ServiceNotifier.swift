import ContextBusSupport
import ContextBusTransport

/// The service manager's notification protocol (`sd_notify(3)`), without libsystemd: newline-separated
/// `VARIABLE=value` assignments in one datagram to the socket `$NOTIFY_SOCKET` names.
///
/// ```
///   storesvc ──"READY=1\nSTATUS=serving …\nMAINPID=42"──▶ $NOTIFY_SOCKET (a path, or "@name": abstract)
///            ──"WATCHDOG=1" every WATCHDOG_USEC/3 ──────▶  (ServiceWatchdog, from the event loops)
///            ──"STOPPING=1\nSTATUS=stopping" ───────────▶
/// ```
///
/// Without `$NOTIFY_SOCKET` (not started by systemd with `Type=notify`) every call does nothing. The watchdog is
/// on when `$WATCHDOG_USEC` is set and `$WATCHDOG_PID` is unset or this process's id, as `sd_watchdog_enabled(3)`
/// reads them. A failed send is reported to `onError` once per kind of failure (the log), never thrown: the
/// service runs on whether or not anyone listens.
package final class ServiceNotifier: Sendable {
    /// Where notifications go: `$NOTIFY_SOCKET`, or `nil` to send nothing.
    package let socket: String?
    /// The watchdog interval systemd expects pings within (`$WATCHDOG_USEC`), when it is this process's.
    package let watchdogInterval: Duration?
    private let onError: @Sendable (String) -> Void
    private let lastError = Locked<String?>(nil)

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from `environment`.
    ///
    /// - Parameters:
    ///   - environment: The process environment (or a test's).
    ///   - processID: This process's id, compared with `WATCHDOG_PID`.
    ///   - onError: Told, once per distinct error, when a notification cannot be sent.
    package init(
        environment: [String: String], processID: Int32, onError: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        let socket = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        self.socket = socket
        self.onError = onError
        var interval: Duration?
        if socket != nil, let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0 {
            let pid = environment["WATCHDOG_PID"].flatMap { Int32($0) }
            if pid == nil || pid == processID { interval = .microseconds(microseconds) }
        }
        watchdogInterval = interval
    }

    /// Whether a service manager listens (`$NOTIFY_SOCKET` is set).
    package var isEnabled: Bool { socket != nil }

    /// `READY=1`: the service is listening and serving. With `status`, also `STATUS=` (one line).
    package func ready(status: String? = nil, mainPID: Int32? = nil) {
        var assignments = ["READY=1"]
        if let status { assignments.append("STATUS=" + Self.oneLine(status)) }
        if let mainPID { assignments.append("MAINPID=\(mainPID)") }
        send(assignments)
    }

    /// `STATUS=…`: what the service is doing, shown by `systemctl status`.
    package func status(_ text: String) {
        send(["STATUS=" + Self.oneLine(text)])
    }

    /// `STOPPING=1`: the service has begun to stop.
    package func stopping(status: String? = nil) {
        var assignments = ["STOPPING=1"]
        if let status { assignments.append("STATUS=" + Self.oneLine(status)) }
        send(assignments)
    }

    /// `WATCHDOG=1`: the service is alive (`ServiceWatchdog` sends it only while every event loop turns).
    package func watchdog() {
        send(["WATCHDOG=1"])
    }

    /// Sends the assignments as one datagram (nothing without `$NOTIFY_SOCKET`).
    package func send(_ assignments: [String]) {
        guard let socket else { return }
        do {
            try DatagramSocket.send(Array(assignments.joined(separator: "\n").utf8), to: socket)
            lastError.withLock { $0 = nil }
        } catch {
            let text = "cannot notify the service manager at \(socket): \(error)"
            let isNew = lastError.withLock { last -> Bool in
                defer { last = text }
                return last != text
            }
            if isNew { onError(text) }
        }
    }

    /// A `STATUS=` value must be one line: newlines become spaces.
    private static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
}
