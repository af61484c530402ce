/// The registry of benchmark suites; each suite adds one line.
enum BenchmarkSuites {
    static let all: [String: @Sendable () throws -> Void] = [
        "busecho": BusBenchmark.run,
        "socket": SocketBenchmark.run,
        "store": StoreBenchmark.run,
        "wire": WireBenchmark.run,
    ]
}
