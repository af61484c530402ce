import ContextBusClient
import ContextBusSupport
import ContextBusWire

/// `ctxbus store watch [ENTITY] [--where P] [--arg k=v]… [--since TXN] [--to-many values|changes]`: streams `store.changed`
/// until Ctrl-C or SIGTERM (exit 0).
struct StoreWatchCommand: Command {
    static let configuration = CommandConfiguration(
        name: "watch", abstract: "Print the store's changes as they are committed, until Ctrl-C.",
        discussion: """
            Sends store.subscribe and prints every store.changed event: one line per object that entered \
            (inserted, with all its values), changed in (updated, with the changed values) or left \
            (deleted) the watched set. With --json, each event's params as one JSON value per line. \
            Ctrl-C or SIGTERM ends the watch with exit status 0; a lost connection exits 3, or with \
            --reconnect is restored (the service restarting) and the watch resubscribes from the last \
            transaction printed: no change is missed or printed twice. With --sort or --limit (an             <entity> is needed), the watch is a live query instead (store.watch): it prints the ordered             list, then the whole list again after every transaction that changes it (with --json, the             result, then each store.results event's params).
            """,
        arguments: [
            ArgumentSpec("entity", help: "Watch only this entity (required with --where).", isOptional: true)
        ],
        options: StoreCommands.predicateOptions + [
            .value(
                "since", valueName: "txn",
                help: "First replay every transaction after txn (error 410 if the history no longer reaches back)."),
            .value(
                "to-many", valueName: "values|changes",
                help: "values (default): a changed to-many relationship as the whole array of member IDs; "
                    + "changes: only the members added (key+=…) and removed (key-=…)."),
            .repeating(
                "sort", valueName: "[-]key",
                help: "Watch the ordered list (store.watch) sorted by this key path; '-' for descending."),
            .value("limit", valueName: "n", help: "Watch at most the first n objects of the list (store.watch)."),
            .flag(
                "reconnect",
                help: "Keep watching across a lost connection: reconnect (50 ms doubling to 2 s, without end) and "
                    + "resubscribe from the last transaction printed."),
        ],
        service: .store, streamsUntilInterrupted: true,
        examples: [
            "ctxbus store watch Reading",
            "ctxbus store watch Reading --where 'characteristic == $c' --arg c=2a19 --json",
            "ctxbus store watch --since 0",
            "ctxbus store watch Device --to-many changes",
            "ctxbus store watch Reading --reconnect",
            "ctxbus store watch Reading --sort -time --limit 10",
        ])

    let params: SubscribeParams
    /// Whether the watch survives a lost connection (`--reconnect`).
    let reconnects: Bool
    /// A live query of an ordered list instead of a subscription (`--sort`, `--limit`).
    let liveQuery: FetchParams?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        let entity = arguments.firstPositional("entity")
        let predicate = arguments.value("where")
        if predicate != nil, entity == nil { throw UsageError("--where needs an <entity>") }
        params = SubscribeParams(
            entity: entity, predicate: predicate,
            arguments: try KeyValueArgument.object(arguments.values("arg"), option: "--arg"),
            since: try arguments.integer("since", atLeast: 0).map(Int64.init),
            toMany: try arguments.choice("to-many", of: SubscribeParams.ToMany.self) ?? .values)
        reconnects = arguments.flag("reconnect")
        let sort = try SortArgument.descriptors(arguments.values("sort"))
        let limit = try arguments.integer("limit", atLeast: 0)
        if !sort.isEmpty || limit != nil {
            guard let entity else { throw UsageError("--sort and --limit need an <entity>") }
            if reconnects { throw UsageError("--reconnect is for subscriptions, not with --sort or --limit") }
            liveQuery = FetchParams(
                entity: entity, predicate: predicate, arguments: params.arguments, sort: sort, limit: limit)
        } else {
            liveQuery = nil
        }
    }

    func run(in context: CommandContext) async throws {
        if let liveQuery { return try await runLiveQuery(liveQuery, in: context) }
        let console = context.console
        let client = try await context.connect(reconnect: reconnects ? BusClient.ReconnectPolicy() : nil)
        defer { client.close() }
        let rendering = console.isJSON ? nil : ObjectRendering(model: await StoreCommands.model(from: client))
        // Observed before subscribing: the first event may follow the result at once.
        let events = client.eventStream(method: ChangedEvent.method)
        context.interruption.onInterrupt { _ in client.close() }
        let subscription = try await StoreCommands.reportingPredicateErrors(params.predicate) {
            try await client.call(StoreSubscribe.self, params)
        }
        // The last transaction printed (or the one the watch starts after): a resubscription replays from there,
        // and an event at or below it is not printed again.
        let lastPrinted = Locked(params.since ?? subscription.txn)
        let resubscribeFailure = Locked<String?>(nil)
        if reconnects {
            client.onReconnect { [params] _ in
                var again = params
                again.since = lastPrinted.withLock { $0 }
                do {
                    _ = try client.callAndWait(StoreSubscribe.self, again)
                    console.note("reconnected; watching again from txn \(again.since ?? 0)")
                } catch {
                    resubscribeFailure.withLock { $0 = "could not subscribe again: \(error)" }
                    client.close()
                }
            }
        }
        if rendering != nil {
            let what = params.entity ?? "every entity"
            console.note("watching \(what) from txn \(params.since ?? subscription.txn); Ctrl-C stops")
        }
        for await event in events {
            guard let change = try? event.payload(as: ChangedEvent.self) else { continue }
            let isNew = lastPrinted.withLock { last -> Bool in
                guard change.txn > last else { return false }
                last = change.txn
                return true
            }
            guard isNew else { continue }
            if let rendering { console.lines(rendering.lines(for: change)) } else { console.json(event.params) }
        }
        if context.interruption.signal == nil, let endpoint = context.endpoint {
            let reason = resubscribeFailure.withLock { $0 } ?? client.connectionState.description
            throw CommandFailure.connectionLost(endpoint, reason: reason)
        }
    }
}

extension StoreWatchCommand {
    /// `--sort`/`--limit`: `store.watch`, printing the list, then the list again after each change.
    fileprivate func runLiveQuery(_ params: FetchParams, in context: CommandContext) async throws {
        let console = context.console
        let client = try await context.connect(reconnect: nil)
        defer { client.close() }
        let rendering = ObjectRendering(model: await StoreCommands.model(from: client))
        let events = client.eventStream(method: ResultsEvent.method)
        context.interruption.onInterrupt { _ in client.close() }
        let answer = try await StoreCommands.reportingPredicateErrors(params.predicate) {
            try await client.call(method: StoreWatch.name, params: params.json)
        }
        var objects = try JSONFields(answer).objects("objects") { (object) throws(RPCError) in
            try StoreObject(fields: object)
        }
        func show(_ txn: JSONValue?) {
            console.line(
                "txn \(txn.map { "\($0)" } ?? "?"): \(objects.count) \(objects.count == 1 ? "object" : "objects")")
            if !objects.isEmpty { console.lines(rendering.table(for: objects, entity: params.entity).lines) }
        }
        if console.isJSON { console.json(answer) } else { show(answer["txn"]) }
        for await event in events {
            guard let results = try? ResultsEvent(json: event.params) else { continue }
            for index in results.removed where index < objects.count { objects.remove(at: index) }
            for insertion in results.inserted where insertion.index <= objects.count {
                objects.insert(
                    StoreObject(
                        id: insertion.object.id, version: insertion.object.version,
                        values: insertion.object.values.mapValues(\.jsonValue)),
                    at: insertion.index)
            }
            for update in results.updated where update.index < objects.count {
                objects[update.index].version = update.version
                for (key, value) in update.values { objects[update.index].values[key] = value }
            }
            if console.isJSON { console.json(event.params) } else { show(.int(results.txn)) }
        }
        if context.interruption.signal == nil, let endpoint = context.endpoint {
            throw CommandFailure.connectionLost(endpoint, reason: client.connectionState.description)
        }
    }
}
