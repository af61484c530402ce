import ContextBusClient
import ContextBusWire
import Foundation

/// `ctxbus ping [store|device|fleet] [--timeout SECONDS]`: whether each service answers, within a deadline.
struct PingCommand: Command {
    static let configuration = CommandConfiguration(
        name: "ping", abstract: "Check that the services answer (a health check): exit 0, or 3 when one does not.",
        discussion: """
            Connects to each service, says bus.hello and sends bus.ping; a service answers within --timeout \
            or counts as not answering, whether nothing listens, it refuses, or it is stopped or wedged \
            (connected but silent). Both services are asked at once, so the whole check takes at most \
            --timeout. Prints one line per service (with --json, one object per service).
            """,
        arguments: [ServiceTargets.argument],
        options: [
            .value("timeout", valueName: "seconds", help: "How long each service has to answer (default 5)."),
            ServiceTargets.socketOption,
        ],
        examples: [
            "ctxbus ping", "ctxbus ping store --timeout 2", "ctxbus ping device --socket /run/ctxbus/device.sock",
        ])

    let service: ServiceKind?
    let socket: String?
    let timeout: Duration

    init(_ arguments: ParsedArguments) throws(UsageError) {
        service = try ServiceTargets.service(arguments)
        socket = arguments.value("socket")
        let seconds = try arguments.number("timeout", above: 0) ?? 5
        timeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    /// One service's answer.
    struct Outcome: Sendable {
        var endpoint: ServiceEndpoint
        var hello: HelloResult?
        var milliseconds: Double
        var failure: String?
    }

    func run(in context: CommandContext) async throws {
        let endpoints = ServiceTargets.endpoints(service, socket: socket, environment: context.environment)
        let outcomes = await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, endpoint) in endpoints.enumerated() {
                group.addTask { (index, await Self.ping(endpoint, timeout: timeout)) }
            }
            var outcomes: [(Int, Outcome)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let console = context.console
        for outcome in outcomes {
            let name = outcome.endpoint.service.rawValue
            if console.isJSON {
                var members: [String: JSONValue] = [
                    "service": .string(name), "socket": .string(outcome.endpoint.path),
                    "ok": .bool(outcome.failure == nil),
                    "milliseconds": .double((outcome.milliseconds * 10).rounded() / 10),
                ]
                if let hello = outcome.hello {
                    members["server"] = .string(hello.server)
                    members["version"] = .string(hello.version)
                }
                if let failure = outcome.failure { members["error"] = .string(failure) }
                console.json(.object(members))
            } else if let failure = outcome.failure {
                console.line("\(name): not answering at \(outcome.endpoint.path): \(failure)")
            } else {
                let server = outcome.hello.map { "\($0.server) \($0.version)" } ?? "?"
                let time = String(format: "%.1f", outcome.milliseconds)
                console.line("\(name): ok (\(server) at \(outcome.endpoint.path), \(time) ms)")
            }
        }
        let failed = outcomes.filter { $0.failure != nil }
        if !failed.isEmpty {
            throw CommandFailure(
                .unreachable, failed.map { "\($0.endpoint.service.executable) is not answering" })
        }
    }

    /// Connects, says hello and pings, all within `timeout`.
    static func ping(_ endpoint: ServiceEndpoint, timeout: Duration) async -> Outcome {
        let clock = ContinuousClock()
        let started = clock.now
        var options = BusClient.Options(callTimeout: timeout)
        options.connectTimeout = timeout
        func elapsed() -> Double {
            let (seconds, attoseconds) = (clock.now - started).components
            return Double(seconds) * 1000 + Double(attoseconds) / 1e15
        }
        do {
            let client = try await BusClient.connect(to: endpoint.path, clientName: "ctxbus-ping", options: options)
            defer { client.close() }
            let remaining = timeout - (clock.now - started)
            guard remaining > .zero else { throw BusClientError.timedOut(method: BusPing.name, after: timeout) }
            _ = try await client.call(BusPing.self, timeout: remaining)
            return Outcome(endpoint: endpoint, hello: client.hello, milliseconds: elapsed())
        } catch {
            return Outcome(endpoint: endpoint, milliseconds: elapsed(), failure: "\(error)")
        }
    }
}
