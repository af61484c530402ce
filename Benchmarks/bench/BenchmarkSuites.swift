/// The registry of benchmark suites; each suite adds one line.
enum BenchmarkSuites {
    static let all: [String: @Sendable () throws -> Void] = [
        "bus": StoreBusBenchmark.run,
        "busdurable": StoreBusBenchmark.runDurableSaves,
        "busecho": BusBenchmark.run,
        "busfanout": StoreBusBenchmark.runFanOut,
        "buswatch": StoreBusBenchmark.runWatches,
        "device": DeviceBenchmark.run,
        "devicewatch": DeviceWatchBenchmark.run,
        "fleet": FleetBenchmark.run,
        "migrate": MigrateBenchmark.run,
        "reactive": ReactiveBenchmark.run,
        "socket": SocketBenchmark.run,
        "stack": StackBenchmark.run,
        "store": StoreBenchmark.run,
        "storedata": StoreDataBenchmark.run,
        "storefetch": StoreFetchBenchmark.run,
        "storegroup": StoreGroupCommitBenchmark.run,
        "storegroup8": StoreGroupCommitBenchmark.runEightThreads,
        "storesaves": StoreSavesBenchmark.run,
        "wire": WireBenchmark.run,
    ]
}
