import ContextBusWire

/// `ctxbus store model`: the served model.
struct StoreModelCommand: Command {
    static let configuration = CommandConfiguration(
        name: "model", abstract: "Print the model the store serves (entities, attributes, relationships).",
        service: .store,
        examples: ["ctxbus store model", "ctxbus store model --json > model.json"])

    init(_ arguments: ParsedArguments) throws(UsageError) {}

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(StoreModel.self) }
        guard !context.console.isJSON else { return context.console.json(result.json) }
        context.console.lines(Self.lines(for: result))
    }

    /// One table per entity: its properties with type, optional, indexed and default, or the
    /// relationship's destination, inverse and delete rule.
    static func lines(for result: ModelResult) -> [String] {
        var lines = ["model version \(result.version)"]
        for entity in result.model.entities {
            lines.append("")
            lines.append("\(entity.name):")
            var rows = entity.attributes.map { attribute in
                [
                    attribute.name, attribute.type.rawValue, attribute.isOptional ? "yes" : "no",
                    attribute.isIndexed ? "yes" : "no",
                    attribute.defaultValue.map { ValueText.text($0.jsonValue) } ?? "",
                ]
            }
            rows += entity.relationships.map { relationship in
                [
                    relationship.name,
                    "\(relationship.isToMany ? "to-many" : "to-one") \(relationship.destination)", "", "",
                    "inverse \(relationship.inverse), delete rule \(relationship.deleteRule.rawValue)",
                ]
            }
            lines += Table(["property", "type", "optional", "indexed", "default / relationship"], rows: rows).lines
        }
        return lines
    }
}
