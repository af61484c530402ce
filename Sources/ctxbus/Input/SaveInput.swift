import ContextBusObjectGraph
import ContextBusSupport
import ContextBusWire

/// What `ctxbus store save` is to send, in one of two forms.
///
/// - JSON in the protocol's `store.save` shape, inline (`'{"insert":[…]}'`) or `-` for standard input.
/// - Options, in order: `--insert ENTITY[:REF]`, `--update ID[@VERSION]` and `--delete ID[@VERSION]`,
///   each `--insert`/`--update` followed by its `key=value` words (values read as in
///   `KeyValueArgument`: JSON when they parse, else strings). A relationship may name an insert of
///   the same save by its ref: `--insert Device:d1 address=AA:BB:CC:DD:EE:01 --insert Reading
///   device=d1 …`. Without `@VERSION` the conflict check is skipped.
enum SaveInput: Sendable, Hashable {
    case json(JSONValue)
    case standardInput
    case form(SaveForm)

    /// Reads the save's words: `positional` are the non-option words in order with the options
    /// (`items` of `ParsedArguments`).
    static func parse(_ arguments: ParsedArguments) throws(UsageError) -> SaveInput {
        let formOptions: Set<String> = ["insert", "update", "delete"]
        let usesForm = arguments.items.contains { item in
            if case .option(let name, _) = item { return formOptions.contains(name) }
            return false
        }
        guard usesForm else {
            let words = arguments.positional("input")
            guard words.count == 1 else {
                throw UsageError(
                    words.isEmpty
                        ? "nothing to save: give JSON, '-' for standard input, or --insert/--update/--delete"
                        : "expected one JSON argument (quote it), got \(words.count) words")
            }
            if words[0] == "-" { return .standardInput }
            return .json(try json(words[0], from: "the argument"))
        }
        return .form(try form(arguments.items))
    }

    /// Parses JSON text given as the save.
    static func json(_ text: String, from origin: String) throws(UsageError) -> JSONValue {
        do {
            return try JSONParser().parse(text)
        } catch {
            throw UsageError("\(origin) is not valid JSON: \(error)")
        }
    }

    /// Checks JSON against the `store.save` shape.
    static func params(from json: JSONValue) throws(UsageError) -> SaveForm {
        do {
            return try SaveForm(json: json)
        } catch {
            throw UsageError("the save JSON does not have the store.save shape: \(error.message)")
        }
    }

    private enum Target {
        case insert(Int)
        case update(Int)
    }

    private static func form(_ items: [ParsedArguments.Item]) throws(UsageError) -> SaveForm {
        var params = SaveForm()
        var target: Target?
        for item in items {
            switch item {
            case .option("insert", let value?):
                var entity = Substring(value)
                var ref: String?
                if let colon = value.firstIndex(of: ":") {
                    entity = value[..<colon]
                    ref = String(value[value.index(after: colon)...])
                    guard ref?.isEmpty == false else { throw UsageError("--insert '\(value)': empty ref after ':'") }
                }
                guard !entity.isEmpty else { throw UsageError("--insert '\(value)': expected ENTITY[:REF]") }
                params.inserts.append(.init(entity: String(entity), ref: ref, values: [:]))
                target = .insert(params.inserts.count - 1)
            case .option("update", let value?):
                let (id, version) = try reference(value, option: "update")
                params.updates.append(.init(id: id, version: version, values: [:]))
                target = .update(params.updates.count - 1)
            case .option("delete", let value?):
                let (id, version) = try reference(value, option: "delete")
                params.deletes.append(.init(id: id, version: version))
                target = nil
            case .positional(let word):
                let pair = try KeyValueArgument(parsing: word, option: "value")
                switch target {
                case .insert(let i): params.inserts[i].values[pair.key] = pair.value
                case .update(let i): params.updates[i].values[pair.key] = pair.value
                case nil:
                    throw UsageError(
                        "'\(word)' does not follow an --insert or --update (key=value words belong to one)")
                }
            case .option:
                continue
            }
        }
        for (i, update) in params.updates.enumerated() where update.values.isEmpty {
            throw UsageError("--update \(params.updates[i].id) changes nothing: add key=value words")
        }
        return params
    }

    /// `Device/3` or `Device/3@2`.
    private static func reference(_ text: String, option: String) throws(UsageError) -> (ObjectID, Int64?) {
        var idText = Substring(text)
        var version: Int64?
        if let at = text.firstIndex(of: "@") {
            idText = text[..<at]
            guard let number = Int64(text[text.index(after: at)...]), number >= 1 else {
                throw .invalidValue(text, for: option, expected: "ID@VERSION with a version of at least 1")
            }
            version = number
        }
        guard let id = ObjectID(string: String(idText)), !id.isTemporary else {
            throw .invalidValue(text, for: option, expected: "an object ID like Device/3, optionally @VERSION")
        }
        return (id, version)
    }
}
