// swift-tools-version:6.0
import PackageDescription

// A user's package of its own, depending on ContextBus by path: the ContextBusEntities plugin generates the types of
// Garden.ctxmodel.json when `garden` builds (scripts/plugin-check copies it to a temporary directory and builds it
// there with CONTEXTBUS_PATH set to the repository; in place, the repository is two levels up).
let contextBus = Context.environment["CONTEXTBUS_PATH"] ?? "../.."

let package = Package(
    name: "Garden",
    dependencies: [.package(name: "ContextBus", path: contextBus)],
    targets: [
        .executableTarget(
            name: "garden",
            dependencies: [.product(name: "ContextBus", package: "ContextBus")],
            resources: [.copy("Garden.ctxmodel.json")],
            plugins: [.plugin(name: "ContextBusEntities", package: "ContextBus")])
    ],
    swiftLanguageModes: [.v6]
)
