import Foundation
import PackagePlugin

/// The build-tool plugin that generates typed entities from a target's model files, as Xcode's Core Data code
/// generation does: each `NAME.ctxmodel.json` of the target (a model shaped like `store.model`'s result) becomes
/// `NAME.swift` in the build, compiled into the target, with one `ManagedEntity` struct per entity (`docs/cli.md`,
/// `ctxbus model swift`, prints the same source).
///
/// ```swift
/// .executableTarget(
///     name: "garden",
///     dependencies: [.product(name: "ContextBus", package: "ContextBus")],
///     resources: [.copy("Garden.ctxmodel.json")],
///     plugins: [.plugin(name: "ContextBusEntities", package: "ContextBus")])
/// ```
@main
struct ContextBusEntities: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "ctxbus-entities")
        return Self.modelFiles(in: target).map { model in
            let name = model.lastPathComponent.dropLast(Self.suffix.count)
            let output = context.pluginWorkDirectoryURL.appending(path: "\(name).swift")
            return .buildCommand(
                displayName: "Generating the entities of \(model.lastPathComponent)",
                executable: tool.url, arguments: [model.path, "--output", output.path],
                inputFiles: [model], outputFiles: [output])
        }
    }

    /// What a model file's name ends with.
    static let suffix = ".ctxmodel.json"

    /// The target's model files, sorted: SwiftPM lists a target's resources among its files (declare the model a
    /// resource, as a program loads it at run time); an excluded file is not listed.
    static func modelFiles(in target: SourceModuleTarget) -> [URL] {
        target.sourceFiles.map(\.url).filter { $0.lastPathComponent.hasSuffix(suffix) }.sorted { $0.path < $1.path }
    }
}
