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
            transaction printed: no change is missed or printed twice.
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
        ])

    let params: SubscribeParams
    /// Whether the watch survives a lost connection (`--reconnect`).
    let reconnects: Bool

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
    }

    func run(in context: CommandContext) async throws {
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
