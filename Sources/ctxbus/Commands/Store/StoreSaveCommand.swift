import ContextBusObjectGraph
import ContextBusWire
import Foundation

/// `ctxbus store save JSON | - | --insert ENTITY[:REF] k=v… --update ID[@V] k=v… --delete ID[@V]`.
struct StoreSaveCommand: Command {
    static let configuration = CommandConfiguration(
        name: "save", abstract: "Insert, update and delete objects in one transaction.",
        discussion: """
            Sends store.save. The save is given either as JSON in the protocol's store.save shape \
            ({"insert":[{"entity","ref"?,"values"}], "update":[{"id","version"?,"values"}], \
            "delete":[{"id","version"?}]}), \
            inline or '-' to read it from standard input, or with --insert, --update and --delete, each \
            --insert/--update followed by its key=value words. key=value values are read like --arg values \
            of fetch: JSON when they parse (20, true, null, "text"), else a string (thermo, AA:BB:CC:DD:EE:01). \
            Dates are RFC 3339 strings, binary values base64, relationships IDs (Device/3) or the ref of an \
            insert of the same save. Without @VERSION the conflict check is skipped.
            Prints the transaction and the IDs and versions the save gave; with --json, the result as one \
            JSON value ({"txn","ids","versions"}).
            """,
        arguments: [
            ArgumentSpec(
                "input",
                help: "The save as JSON, '-' for standard input, or key=value words of the "
                    + "preceding --insert/--update.", isRepeating: true, isOptional: true)
        ],
        options: [
            .repeating(
                "insert", valueName: "entity[:ref]",
                help: "Insert an object; the key=value words that follow are its values."),
            .repeating(
                "update", valueName: "id[@version]",
                help: "Update an object; the key=value words that follow are the changed values."),
            .repeating("delete", valueName: "id[@version]", help: "Delete an object."),
            .value(
                "merge-policy", valueName: "policy",
                help: "error (default), objectTrump, storeTrump, overwrite or rollback; overrides the JSON's."),
            .value(
                "durability", valueName: "disk|memory",
                help: "disk (default): answer once durable; memory: once the root accepted it."),
            .value("author", valueName: "name", help: "The author recorded with the transaction."),
        ],
        service: .store,
        examples: [
            "ctxbus store save --insert Device:d1 address=AA:BB:CC:DD:EE:01 name=thermo",
            "ctxbus store save --update Device/1@1 name=kitchen --delete Reading/7",
            "ctxbus store save '{\"insert\":[{\"entity\":\"Device\",\"values\":{\"address\":\"AA:BB:CC:DD:EE:02\"}}]}'",
            "ctxbus store save - < save.json",
        ])

    let input: SaveInput
    let mergePolicy: MergePolicy?
    let durability: Durability?
    let author: String?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        input = try SaveInput.parse(arguments)
        mergePolicy = try arguments.choice("merge-policy")
        durability = try arguments.choice("durability")
        author = arguments.value("author")
        if case .json(let json) = input { _ = try SaveInput.params(from: json) }
    }

    /// The params to send, reading standard input when asked to.
    func params() throws(UsageError) -> SaveForm {
        var params: SaveForm
        switch input {
        case .form(let form):
            params = form
        case .json(let json):
            params = try SaveInput.params(from: json)
        case .standardInput:
            let data = FileHandle.standardInput.readDataToEndOfFile()
            params = try SaveInput.params(
                from: try SaveInput.json(String(decoding: data, as: UTF8.self), from: "standard input"))
        }
        if let mergePolicy { params.mergePolicy = mergePolicy }
        if let durability { params.durability = durability }
        if let author { params.author = author }
        return params
    }

    func run(in context: CommandContext) async throws {
        let params = try self.params()
        let console = context.console
        let answer = try await context.withClient { try await $0.call(method: StoreSave.name, params: params.json) }
        let result = try SaveResult(json: answer, model: nil)
        if console.isJSON { return console.json(answer) }
        console.line("saved: txn \(result.txn)")
        let named = result.ids.map { (ref: $0.key.temporaryReference ?? $0.key.description, id: $0.value) }
        var rows: [[String]] = named.sorted { $0.ref < $1.ref }.map { ref, id in
            [id.description, result.versions[id].map(String.init) ?? "", ref]
        }
        let namedIDs = Set(result.ids.values)
        rows += result.versions.filter { !namedIDs.contains($0.key) }.sorted { $0.key.description < $1.key.description }
            .map { id, version in [id.description, String(version), ""] }
        if !rows.isEmpty { console.lines(Table(["id", "version", "ref"], rows: rows).lines) }
    }
}
