import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire
import Foundation

/// `ctxbus store model [--diff NEW.json]`: the served model, or what serving `NEW.json` instead would migrate.
struct StoreModelCommand: Command {
    static let configuration = CommandConfiguration(
        name: "model", abstract: "Print the model the store serves (entities, attributes, relationships).",
        discussion: """
            Sends store.model. With --diff, compares the served model with the model file and prints the plan             storesvc would follow if started with --model FILE: one line per difference, "ok" when it can be             migrated in place, "refused" when not (exit status 78). The comparison is made here, from the two             models: whether live objects collide on an added uniqueBy is known only from the data             (storesvc --model FILE --check-migration reads the file and says). With --json, the model             ({"version",…,"previousVersions"?}) or the plan ({"from","to","canMigrate","steps":[…]}).
            """,
        options: [
            .value("diff", valueName: "file", help: "Compare with this model file instead of printing the model.")
        ],
        service: .store,
        examples: [
            "ctxbus store model", "ctxbus store model --json > model.json", "ctxbus store model --diff model.json",
        ])

    /// The model file of `--diff`.
    let newModel: Model?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let path = arguments.value("diff") else {
            newModel = nil
            return
        }
        do {
            newModel = try Model(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw UsageError("--diff \(path): \(error)")
        }
    }

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { try await $0.call(StoreModel.self) }
        guard let newModel else {
            guard !context.console.isJSON else { return context.console.json(result.json) }
            return context.console.lines(Self.lines(for: result))
        }
        let plan = MigrationPlan(from: result.model, to: newModel)
        if context.console.isJSON {
            context.console.json(Self.json(for: plan))
        } else {
            context.console.lines(Self.lines(for: plan))
        }
        if !plan.canMigrate {
            throw CommandFailure(
                .migrationRefused,
                [
                    "\(plan.refusals.count) of the differences cannot be migrated in place: storesvc would refuse to start"
                ])
        }
    }

    /// The plan's summary, then one line per difference; a unique key the plan adds says the data decides.
    static func lines(for plan: MigrationPlan) -> [String] {
        var lines = [plan.summary]
        for (step, line) in zip(plan.steps, plan.lines) {
            lines.append(line)
            if case .uniqueByAdded = step.change {
                lines.append(
                    "         (if no two live objects share its values: storesvc --check-migration reads them)")
            }
        }
        return lines
    }

    /// `{"from","to","canMigrate","steps":[{"entity","key"?,"possible","text"}]}`.
    static func json(for plan: MigrationPlan) -> JSONValue {
        .object([
            "from": .string(plan.stored.versionHash), "to": .string(plan.target.versionHash),
            "canMigrate": .bool(plan.canMigrate),
            "steps": .array(
                plan.steps.map { step in
                    var members: [String: JSONValue] = [
                        "entity": .string(step.entity), "possible": .bool(step.isPossible), "text": .string(step.what),
                    ]
                    if let key = step.key { members["key"] = .string(key) }
                    return .object(members)
                }),
        ])
    }

    /// One table per entity: its properties with type, optional, indexed and default, or the
    /// relationship's destination, inverse and delete rule.
    static func lines(for result: ModelResult) -> [String] {
        var lines = ["model version \(result.version)"]
        if !result.previousVersions.isEmpty {
            lines.append("migrated from \(result.previousVersions.joined(separator: ", then ")) (oldest first)")
        }
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
