import ContextBusClient

/// What a running command gets: the console, the service it talks to, and the interruption.
struct CommandContext: Sendable {
    let console: Console
    /// The service's socket, for commands that declare a service.
    let endpoint: ServiceEndpoint?
    let interruption: Interruption
    /// The process environment (commands that find several services: `ping`, `metrics`).
    var environment: [String: String] = [:]

    /// Connects to the command's service and says `bus.hello` as `ctxbus`.
    ///
    /// - Throws: `CommandFailure.unreachable` naming the socket tried and how to start the service.
    func connect(reconnect: BusClient.ReconnectPolicy? = nil) async throws -> BusClient {
        guard let endpoint else { preconditionFailure("the command declares no service") }
        do {
            return try await BusClient.connect(
                to: endpoint.path, clientName: "ctxbus", options: BusClient.Options(reconnect: reconnect))
        } catch let error as BusClientError {
            throw CommandFailure.unreachable(endpoint, reason: error.description)
        }
    }

    /// Connects, runs `body`, and closes the client whatever happens.
    func withClient<T: Sendable>(_ body: (BusClient) async throws -> T) async throws -> T {
        let client = try await connect()
        defer { client.close() }
        return try await body(client)
    }
}
