import ContextBusClient
import ContextBusObjectGraph
import ContextBusWire

/// `ctxbus store …`: the store service's methods.
enum StoreCommands {
    static let group = CommandGroup(
        name: "store",
        abstract: "Query and change the store service (storesvc), watch its changes.",
        commands: [
            StoreModelCommand.self, StoreFetchCommand.self, StoreGetCommand.self, StoreSaveCommand.self,
            StoreBatchCommand.self, StoreAggregateCommand.self, StoreWatchCommand.self, StoreHistoryCommand.self,
            StoreStatsCommand.self, StoreBackupCommand.self,
        ])

    /// The help text shared by the commands that take a predicate.
    static let predicateOptions: [OptionSpec] = [
        .value(
            "where", valueName: "predicate",
            help: "A predicate in NSPredicate syntax (docs/predicates.md), e.g. 'value > $min AND device.name "
                + "BEGINSWITH \"th\"'. Quote it for the shell."),
        .repeating(
            "arg", valueName: "name=value",
            help: "A value for $name in the predicate. The value is read as JSON when it is valid JSON (20, "
                + "2.5, true, null, \"text\", [1,2]), else taken as a string (thermo, 2a19). To pass a string "
                + "that looks like JSON, quote it as JSON: --arg name='\"20\"'."),
    ]

    /// `--to-many values|faults` of `fetch` and `get` (`toMany` of `store.fetch` / `store.get`).
    static let readToManyOption = OptionSpec.value(
        "to-many", valueName: "values|faults",
        help: "values (default): each to-many relationship as the whole array of member IDs; faults: left "
            + "out (its column stays empty), so that a device with many readings is read without them.")

    /// The served model, or `nil` when the service does not answer it (rendering falls back to
    /// sorted columns).
    static func model(from client: BusClient) async -> Model? {
        try? await client.call(StoreModel.self).model
    }

    /// Runs `body`; a `-32602` about `where` becomes a failure that shows the predicate with a
    /// caret at the position the service reported.
    static func reportingPredicateErrors<T: Sendable>(
        _ predicate: String?, _ body: () async throws -> T
    ) async throws -> T {
        do {
            return try await body()
        } catch let error as RPCError where error.code == .invalidParams && error.field == "where" {
            throw CommandFailure(.serviceError, predicateErrorLines(error, predicate: predicate), serviceError: error)
        }
    }

    /// `the predicate was rejected: …`, then the predicate and a caret under the position, when known.
    static func predicateErrorLines(_ error: RPCError, predicate: String?) -> [String] {
        var lines = ["the service rejected the predicate (error \(error.code.rawValue)): \(error.message)"]
        guard let predicate else { return lines }
        lines.append("  " + predicate)
        if let position = error.data?["position"]?.intValue, position >= 0 {
            let scalars = predicate.unicodeScalars
            let prefixEnd = scalars.index(scalars.startIndex, offsetBy: Int(position), limitedBy: scalars.endIndex)
            let column = prefixEnd.map { String(scalars[..<$0]).count } ?? predicate.count
            lines.append("  " + String(repeating: " ", count: column) + "^")
        }
        return lines
    }
}
