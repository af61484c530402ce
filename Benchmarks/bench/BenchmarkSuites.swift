/// The registry of benchmark suites; each suite adds one line.
enum BenchmarkSuites {
    static let all: [String: @Sendable () throws -> Void] = [
        "socket": SocketBenchmark.run,
        "stack": StackBenchmark.run,
        "store": StoreBenchmark.run,
        "wire": WireBenchmark.run,
    ]
}
