// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "ContextBus",
    products: [
        .library(name: "Shared", targets: ["Shared"]),
        .library(name: "BusProtocol", targets: ["BusProtocol"]),
        .executable(name: "storesvc", targets: ["storesvc"]),
        .executable(name: "devicesvc", targets: ["devicesvc"]),
        .executable(name: "ctxbus", targets: ["ctxbus"]),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .target(name: "Shared", dependencies: ["CSQLite"]),
        .target(name: "BusProtocol", dependencies: ["Shared"]),
        .executableTarget(name: "storesvc", dependencies: ["BusProtocol", "Shared"]),
        .executableTarget(name: "devicesvc", dependencies: ["BusProtocol", "Shared"]),
        .executableTarget(name: "ctxbus", dependencies: ["BusProtocol", "Shared"]),
        .executableTarget(name: "bench", dependencies: ["Shared", "BusProtocol", "CSQLite"], path: "Benchmarks/bench"),
        // Helpers every test module shares (docs/testing.md "Compile time of the tests").
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SharedTests", dependencies: ["Shared", "CSQLite", "TestSupport"]),
        .testTarget(name: "BusProtocolTests", dependencies: ["BusProtocol", "Shared", "TestSupport"]),
        .testTarget(name: "storesvcTests", dependencies: ["storesvc", "BusProtocol", "Shared", "TestSupport"]),
        .testTarget(name: "devicesvcTests", dependencies: ["devicesvc", "BusProtocol", "Shared", "TestSupport"]),
        .testTarget(name: "ctxbusTests", dependencies: ["ctxbus", "BusProtocol", "Shared", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
