@preconcurrency import Glibc

/// The benchmark runner behind `scripts/bench`. Each suite lives in its own file and registers here.
let suites: [String: @Sendable () throws -> Void] = BenchmarkSuites.all

let requested = Array(CommandLine.arguments.dropFirst())
if requested.isEmpty || requested.contains("--help") {
    print("USAGE: bench <suite>...\nSuites: \(suites.keys.sorted().joined(separator: ", "))")
    exit(requested.isEmpty ? 64 : 0)
}
for name in requested {
    guard let suite = suites[name] else {
        fputs("bench: unknown suite '\(name)'; known: \(suites.keys.sorted().joined(separator: ", "))\n", stderr)
        exit(64)
    }
    do {
        try suite()
    } catch {
        fputs("bench: suite '\(name)' failed: \(error)\n", stderr)
        exit(1)
    }
}
