import BusProtocol
import Shared

/// A stand-in for `storesvc` on a real socket: answers `store.fetch` (no objects) and `store.save` (new ids
/// numbered from 1), and keeps what it was asked.
final class FakeStoreService: Sendable {
    let server: BusServer
    private let state = Locked(State())

    private struct State {
        var fetches: [FetchParams] = []
        var saves: [SaveParams] = []
        var nextNumber: Int64 = 1
    }

    init(socketPath: String) throws {
        server = BusServer(configuration: .init(name: "storesvc", version: "test", socketPath: socketPath))
        server.register(StoreFetch.self) { [state] _, params in
            state.withLock { $0.fetches.append(params) }
            return FetchResult(txn: 1, content: .ids([]))
        }
        server.register(StoreSave.self) { [state] _, params in
            state.withLock { state in
                state.saves.append(params)
                var ids: [String: ObjectID] = [:]
                for insert in params.inserts {
                    let id = ObjectID(entity: insert.entity, number: state.nextNumber)
                    state.nextNumber += 1
                    if let ref = insert.ref { ids[ref] = id }
                }
                return SaveResult(txn: Int64(state.saves.count + 1), ids: ids, versions: [:])
            }
        }
        try server.start()
    }

    var fetches: [FetchParams] { state.withLock { $0.fetches } }
    var saves: [SaveParams] { state.withLock { $0.saves } }

    func stop() async {
        await server.shutdown(gracefully: false)
    }
}
