// swift-tools-version:6.0
import PackageDescription

// The layers (docs/architecture.md); each target imports only targets to its left or below it, and
// scripts/module-graph fails on any other import:
//
//   ContextBusSupport ← ContextBusReactive ← ContextBusObjectGraph ← ContextBusSQLite ← ContextBus (in process)
//                                                    ↑
//   ContextBusTransport ← ContextBusWire ─────────────┘
//          ↑                   ↑
//   ContextBusServer, ContextBusClient (talking to the services) ← storesvc, devicesvc, ctxbus, fleetsvc
//   CContextBusNATS (libnats) ← fleetsvc
//   ContextBusDBus ← devicesvc
//   ContextBusObjectGraph ← ContextBusCodeGeneration (typed entities from a model) ← ctxbus, ctxbus-entities (the tool
//   of the ContextBusEntities build-tool plugin: it builds without the bus)
let package = Package(
    name: "ContextBus",
    products: [
        // In one process, like Core Data: contexts, fetches, live queries, SQLiteStore, signals.
        .library(name: "ContextBus", targets: ["ContextBus"]),
        // A client of the services: BusClient, RemoteStore (contexts whose root is storesvc's), the wire types.
        .library(name: "ContextBusClient", targets: ["ContextBusClient"]),
        .executable(name: "storesvc", targets: ["storesvc"]),
        .executable(name: "devicesvc", targets: ["devicesvc"]),
        .executable(name: "ctxbus", targets: ["ctxbus"]),
        .executable(name: "fleetsvc", targets: ["fleetsvc"]),
        // Generates typed entities from a target's `*.ctxmodel.json` models at build time (docs/object-graph.md).
        .plugin(name: "ContextBusEntities", targets: ["ContextBusEntities"]),
    ],
    targets: [
        // C modules: libsqlite3, and the Linux calls the Swift Glibc module does not import (epoll, eventfd, accept4).
        .systemLibrary(name: "CContextBusSQLite", path: "Sources/CContextBusSQLite"),
        .target(name: "CContextBusLinux", path: "Sources/CContextBusLinux"),
        // libnats (`libnats-dev`), for fleetsvc's JetStream bridge only.
        .systemLibrary(name: "CContextBusNATS", path: "Sources/CContextBusNATS"),

        // The in-process library (Sources/Shared).
        .target(name: "ContextBusSupport", path: "Sources/Shared/Support"),
        .target(name: "ContextBusReactive", dependencies: ["ContextBusSupport"], path: "Sources/Shared/Reactive"),
        .target(
            name: "ContextBusObjectGraph", dependencies: ["ContextBusReactive", "ContextBusSupport"],
            path: "Sources/Shared/ObjectGraph"),
        .target(
            name: "ContextBusSQLite",
            dependencies: ["ContextBusObjectGraph", "ContextBusSupport", "CContextBusSQLite"],
            path: "Sources/Shared/Persistence"),
        .target(
            name: "ContextBus",
            dependencies: ["ContextBusSupport", "ContextBusReactive", "ContextBusObjectGraph", "ContextBusSQLite"],
            path: "Sources/Shared/ContextBus"),

        // Typed entities from a model: `ctxbus model swift` and the ContextBusEntities plugin's tool.
        .target(
            name: "ContextBusCodeGeneration", dependencies: ["ContextBusObjectGraph", "ContextBusSupport"],
            path: "Sources/CodeGeneration"),
        .executableTarget(name: "ctxbus-entities", dependencies: ["ContextBusCodeGeneration"]),
        .plugin(name: "ContextBusEntities", capability: .buildTool(), dependencies: ["ctxbus-entities"]),

        // The bus (Sources/BusProtocol).
        .target(
            name: "ContextBusTransport", dependencies: ["ContextBusSupport", "CContextBusLinux"],
            path: "Sources/BusProtocol/Transport"),
        .target(
            name: "ContextBusWire",
            dependencies: ["ContextBusObjectGraph", "ContextBusTransport", "ContextBusSupport"],
            path: "Sources/BusProtocol/Wire"),
        .target(
            name: "ContextBusServer",
            dependencies: [
                "ContextBusWire", "ContextBusTransport", "ContextBusObjectGraph", "ContextBusReactive",
                "ContextBusSupport",
            ],
            path: "Sources/BusProtocol/Server"),
        .target(
            name: "ContextBusClient",
            dependencies: [
                "ContextBusWire", "ContextBusTransport", "ContextBusObjectGraph", "ContextBusReactive",
                "ContextBusSupport",
            ],
            path: "Sources/BusProtocol/Client"),

        // The native D-Bus client devicesvc talks to BlueZ with.
        .target(name: "ContextBusDBus", dependencies: ["ContextBusSupport"], path: "Sources/devicesvc/DBus"),

        .executableTarget(
            name: "storesvc",
            dependencies: [
                "ContextBusServer", "ContextBusWire", "ContextBusSQLite", "ContextBusObjectGraph", "ContextBusSupport",
            ]),
        .executableTarget(
            name: "devicesvc",
            dependencies: [
                "ContextBusServer", "ContextBusClient", "ContextBusWire", "ContextBusDBus", "ContextBusObjectGraph",
                "ContextBusReactive", "ContextBusSupport",
            ],
            exclude: ["DBus"]),
        .executableTarget(
            name: "ctxbus",
            dependencies: [
                "ContextBusClient", "ContextBusWire", "ContextBusObjectGraph", "ContextBusSupport",
                "ContextBusCodeGeneration",
            ]),
        .executableTarget(
            name: "fleetsvc",
            dependencies: [
                "ContextBusServer", "ContextBusClient", "ContextBusWire", "ContextBusObjectGraph", "ContextBusSupport",
                "CContextBusNATS",
            ]),
        .executableTarget(
            name: "bench",
            dependencies: [
                "ContextBus", "ContextBusSupport", "ContextBusTransport", "ContextBusWire", "ContextBusClient",
                "ContextBusServer", "CContextBusSQLite", "CContextBusNATS", "ContextBusDBus",
            ],
            path: "Benchmarks/bench"),

        // The example program scripts/run runs on the stack: the seeds' five patterns in Swift (examples/patterns).
        .executableTarget(
            name: "patterns", dependencies: ["ContextBus", "ContextBusClient"], path: "examples/patterns",
            exclude: ["README.md"]),

        // Helpers every test module shares (docs/testing.md "Compile time of the tests").
        .target(name: "TestSupport", dependencies: ["ContextBusSupport"], path: "Tests/TestSupport"),
        // The generated types of a model with every attribute type and relationship shape (Tests/EntityFixtures).
        .target(
            name: "EntityFixtures", dependencies: ["ContextBusObjectGraph", "ContextBusSupport"],
            path: "Tests/EntityFixtures", exclude: ["EveryShape.ctxmodel.json"]),
        .testTarget(
            name: "SharedTests",
            dependencies: [
                "ContextBusSupport", "ContextBusReactive", "ContextBusObjectGraph", "ContextBusSQLite",
                "CContextBusSQLite", "ContextBusCodeGeneration", "EntityFixtures",
                "TestSupport",
            ]),
        .testTarget(
            name: "BusProtocolTests",
            dependencies: [
                "ContextBusSupport", "ContextBusObjectGraph", "ContextBusTransport", "ContextBusWire",
                "ContextBusServer",
                "ContextBusClient", "TestSupport",
            ]),
        .testTarget(
            name: "storesvcTests",
            dependencies: [
                "storesvc", "ContextBusSupport", "ContextBusObjectGraph", "ContextBusSQLite", "ContextBusTransport",
                "ContextBusWire", "ContextBusServer", "ContextBusClient", "EntityFixtures", "TestSupport",
            ]),
        .testTarget(
            name: "devicesvcTests",
            dependencies: [
                "devicesvc", "ContextBusSupport", "ContextBusReactive", "ContextBusObjectGraph", "ContextBusWire",
                "ContextBusServer", "ContextBusClient", "ContextBusDBus", "TestSupport",
            ]),
        .testTarget(
            name: "fleetsvcTests",
            dependencies: [
                "fleetsvc", "ContextBusSupport", "ContextBusClient", "ContextBusWire", "ContextBusSQLite",
                "TestSupport",
            ]),
        .testTarget(
            name: "DocumentationTests", dependencies: ["ContextBus", "ContextBusClient", "TestSupport"]),
        .testTarget(
            name: "ctxbusTests",
            dependencies: [
                "ctxbus", "ContextBusSupport", "ContextBusObjectGraph", "ContextBusWire", "ContextBusClient",
                "TestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)

for target in package.targets
where target.type != .system && target.type != .plugin && !target.name.hasPrefix("CContextBus") {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    target.swiftSettings = settings
}
