import ContextBusWire

/// A failure a command reports itself: its message lines and the exit status.
struct CommandFailure: Error, Sendable, Hashable, CustomStringConvertible {
    var status: ExitStatus
    /// The lines printed to standard error, each prefixed with `ctxbus: `.
    var lines: [String]
    /// The service's error behind the failure, printed as `{"error":…}` on standard output with `--json`.
    var serviceError: RPCError?

    init(_ status: ExitStatus, _ lines: [String], serviceError: RPCError? = nil) {
        self.status = status
        self.lines = lines
        self.serviceError = serviceError
    }

    var description: String { lines.joined(separator: "\n") }

    /// The service at `endpoint` could not be reached.
    static func unreachable(_ endpoint: ServiceEndpoint, reason: String) -> CommandFailure {
        CommandFailure(
            .unreachable,
            [
                "cannot reach \(endpoint.service.executable): \(reason)",
                "socket tried: \(endpoint.path) (\(endpoint.sourceDescription))",
                "is \(endpoint.service.executable) running? Start it with: \(endpoint.startCommand)",
                "(or scripts/run for the whole stack; --socket PATH or $\(endpoint.service.socketVariable) "
                    + "points ctxbus elsewhere)",
            ])
    }

    /// The connection to a service ended while a command was using it.
    static func connectionLost(_ endpoint: ServiceEndpoint, reason: String) -> CommandFailure {
        CommandFailure(
            .unreachable, ["the connection to \(endpoint.service.executable) at \(endpoint.path) was lost: \(reason)"])
    }
}
