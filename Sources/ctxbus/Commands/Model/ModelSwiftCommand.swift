import ContextBusCodeGeneration
import Foundation

/// `ctxbus model swift MODEL.json [--output FILE] [--access public|internal]`: the typed entities of a model file, as
/// the ContextBusEntities plugin generates them at build time (one `EntityCodeGenerator`).
struct ModelSwiftCommand: Command {
    static let configuration = CommandConfiguration(
        name: "swift", abstract: "Print the Swift types of a model file's entities (typed entities, like Core Data's).",
        discussion: """
            Reads a model shaped like store.model's result (ctxbus store model --json writes one) and prints one \
            ManagedEntity struct per entity: a property per attribute (optional where the model says so) and \
            relationship, find(…, in:) for each uniqueBy set, and SortKeys for typed fetch requests \
            (docs/object-graph.md, "Typed entities"). The ContextBusEntities build-tool plugin writes the same \
            source for a target's *.ctxmodel.json files at build time. Talks to no service.
            """,
        arguments: [ArgumentSpec("model", help: "The model file (JSON).")],
        options: [
            .value("output", valueName: "file", help: "Write the source to this file instead of standard output."),
            .value(
                "access", valueName: "public|internal",
                help: "The access of the generated declarations (default public)."),
        ],
        examples: [
            "ctxbus model swift Garden.ctxmodel.json > Sources/garden/Garden.swift",
            "ctxbus store model --json > model.json && ctxbus model swift model.json --access internal",
        ])

    let model: String
    let output: String?
    let access: EntityCodeGenerator.Access

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let model = arguments.firstPositional("model") else { throw UsageError("missing <model>") }
        self.model = model
        output = arguments.value("output")
        access = try arguments.choice("access", of: EntityCodeGenerator.Access.self) ?? .public
    }

    func run(in context: CommandContext) async throws {
        let source: String
        do {
            source = try EntityCodeGenerator(access: access).source(forModelAt: URL(fileURLWithPath: model))
        } catch {
            throw CommandFailure(.usage, [error.description])
        }
        guard let output else { return context.console.line(String(source.dropLast())) }
        do {
            try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw CommandFailure(.serviceError, ["cannot write \(output): \(error.localizedDescription)"])
        }
    }
}
