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
        .testTarget(name: "SharedTests", dependencies: ["Shared", "CSQLite"]),
        .testTarget(name: "BusProtocolTests", dependencies: ["BusProtocol", "Shared"]),
        .testTarget(name: "storesvcTests", dependencies: ["storesvc", "BusProtocol", "Shared"]),
        .testTarget(name: "devicesvcTests", dependencies: ["devicesvc", "BusProtocol", "Shared"]),
        .testTarget(name: "ctxbusTests", dependencies: ["ctxbus", "BusProtocol", "Shared"]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets where target.type != .system {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
