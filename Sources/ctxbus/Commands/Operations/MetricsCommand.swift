import ContextBusClient
import ContextBusWire

/// `ctxbus metrics [store|device|fleet]`: every running service's metrics as one Prometheus text exposition.
struct MetricsCommand: Command {
    static let configuration = CommandConfiguration(
        name: "metrics",
        abstract: "Print the services' counters, gauges and histograms in Prometheus' text format (bus.metrics).",
        discussion: """
            Asks each service for bus.metrics and prints one exposition: a metric both services have (the \
            connections, the process metrics) is one family with a sample per service (label service). A \
            service that does not answer is skipped with a note on standard error; the exit status is 3 \
            only when none answered (or the one named did not). With --json, one object per service: \
            {"service","text"}. docs/operations.md lists every metric.
            """,
        arguments: [ServiceTargets.argument],
        options: [
            .value("timeout", valueName: "seconds", help: "How long each service has to answer (default 5)."),
            ServiceTargets.socketOption,
        ],
        examples: ["ctxbus metrics", "ctxbus metrics store | grep commit_seconds"])

    let service: ServiceKind?
    let socket: String?
    let timeout: Duration

    init(_ arguments: ParsedArguments) throws(UsageError) {
        service = try ServiceTargets.service(arguments)
        socket = arguments.value("socket")
        let seconds = try arguments.number("timeout", above: 0) ?? 5
        timeout = .milliseconds(Int64((seconds * 1000).rounded(.up)))
    }

    func run(in context: CommandContext) async throws {
        let endpoints = ServiceTargets.endpoints(service, socket: socket, environment: context.environment)
        var texts: [(ServiceEndpoint, String)] = []
        var failures: [String] = []
        for endpoint in endpoints {
            do {
                var options = BusClient.Options(callTimeout: timeout)
                options.connectTimeout = timeout
                let client = try await BusClient.connect(to: endpoint.path, clientName: "ctxbus", options: options)
                defer { client.close() }
                texts.append((endpoint, try await client.call(BusMetrics.self).text))
            } catch let error as RPCError {
                throw CommandFailure(
                    .serviceError, ["\(endpoint.service.executable) answered bus.metrics with \(error)"],
                    serviceError: error)
            } catch {
                failures.append("\(endpoint.service.executable) not answering at \(endpoint.path): \(error)")
            }
        }
        let console = context.console
        if texts.isEmpty { throw CommandFailure(.unreachable, failures) }
        for failure in failures { console.error("skipped: \(failure)") }
        if console.isJSON {
            for (endpoint, text) in texts {
                console.json(.object(["service": .string(endpoint.service.executable), "text": .string(text)]))
            }
            return
        }
        console.lines(
            Self.merged(texts.map(\.1)).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(
                String.init))
    }

    /// Several expositions as one: the blocks of a family (its `# HELP`, `# TYPE` and samples) that several texts
    /// have are joined under the first one's `# HELP` and `# TYPE`, in the order the families first appear (the
    /// format allows each family's lines only once, in one group).
    static func merged(_ texts: [String]) -> String {
        var order: [String] = []
        var headers: [String: [String]] = [:]
        var samples: [String: [String]] = [:]
        for text in texts {
            var family = ""
            for line in text.split(separator: "\n") {
                let words = line.split(separator: " ", maxSplits: 3)
                if words.count >= 3, words[0] == "#", words[1] == "HELP" || words[1] == "TYPE" {
                    family = String(words[2])
                    if headers[family] == nil {
                        order.append(family)
                        headers[family] = []
                    }
                    if headers[family]!.count < 2, !headers[family]!.contains(where: { $0.hasPrefix("# \(words[1]) ") })
                    {
                        headers[family]!.append(String(line))
                    }
                } else if !line.hasPrefix("#") {
                    samples[family, default: []].append(String(line))
                }
            }
        }
        var output = ""
        for family in order {
            for line in headers[family] ?? [] { output += line + "\n" }
            for line in samples[family] ?? [] { output += line + "\n" }
        }
        return output
    }
}
