// ContextBus in one process, like Core Data: `import ContextBus` gives the object graph (models, contexts,
// fetch requests, predicates, live queries, the store contract and `InMemoryStore`), `SQLiteStore`, and the
// reactive core its signals are made of, with the JSON values and locks they use (ContextBusSupport). Talking to
// the services is `import ContextBusClient`.
@_exported import ContextBusObjectGraph
@_exported import ContextBusReactive
@_exported import ContextBusSQLite
@_exported import ContextBusSupport
