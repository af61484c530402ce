import ContextBusObjectGraph

/// The names the generated source writes for the types and functions it uses: plain (`String`, `Date`,
/// `ManagedObject`), or qualified by their module (`Foundation.Date`) when an entity or key of the model has that
/// name and would shadow it.
struct SwiftTypeNames {
    /// The names the model declares: its entities' and their keys'.
    private let modelNames: Set<String>

    init(model: Model) {
        modelNames = Set(model.entities.flatMap { [$0.name] + $0.propertyNames })
    }

    /// The Swift type an attribute of `type` reads as.
    func attribute(_ type: AttributeType) -> String {
        switch type {
        case .string: return qualified("String", in: "Swift")
        case .int: return qualified("Int64", in: "Swift")
        case .double: return qualified("Double", in: "Swift")
        case .bool: return qualified("Bool", in: "Swift")
        case .date: return qualified("Date", in: "Foundation")
        case .binary: return qualified("Data", in: "Foundation")
        case .uuid: return qualified("UUID", in: "Foundation")
        case .json: return qualified("JSONValue", in: "ContextBusSupport")
        }
    }

    /// A type of `ContextBusObjectGraph` (`ManagedObject`, `ObjectContext`, `SortKey`, …); a module can name
    /// itself, so the qualified form works inside it too.
    func objectGraph(_ name: String) -> String { qualified(name, in: "ContextBusObjectGraph") }

    /// A type or function of the standard library.
    func swift(_ name: String) -> String { qualified(name, in: "Swift") }

    /// An entity's generated type.
    func entity(_ name: String) -> String { SwiftIdentifier.escaped(name) }

    private func qualified(_ name: String, in module: String) -> String {
        modelNames.contains(name) ? "\(module).\(name)" : name
    }
}
