import ContextBusClient
import ContextBusObjectGraph
import Foundation

/// Saves `record: true` chains into the store service through an `ObjectContext` over a `RemoteStore`, like any
/// other client of `storesvc`.
///
/// The store is opened with `changeStream: .off`: the recorder only writes, so it costs the service no
/// subscription. Each recording is one fresh context (nothing accumulates between chains) saved as one durable
/// transaction authored `devicesvc`, with merge policy `objectTrump`: the `Device` is an upsert by its unique
/// `address` (one round trip, no fetch), its `Reading`s inserted, and the service's values win over a concurrent
/// edit of the same keys (the service is the only writer of its devices' state). Recordings are saved one at a time, in the order chains
/// finished. The store being unreachable never fails a chain: the chain's answer says `"recorded": false` with
/// the reason, and the next recording connects again.
actor StoreRecorder {
    let socketPath: String
    private let callTimeout: Duration
    private var store: RemoteStore?
    private var tail: Task<Void, Never>?

    init(socketPath: String, callTimeout: Duration = .seconds(5)) {
        self.socketPath = socketPath
        self.callTimeout = callTimeout
    }

    /// Saves `recording` after the recordings before it.
    ///
    /// - Returns: `nil` when it was saved, else why not (one line).
    func record(_ recording: ChainRecording) async -> String? {
        let previous = tail
        let task = Task { () -> String? in
            await previous?.value
            return await self.save(recording)
        }
        tail = Task { _ = await task.value }
        return await task.value
    }

    /// Closes the connection to the store.
    func close() {
        store?.close()
        store = nil
    }

    private func save(_ recording: ChainRecording) async -> String? {
        do {
            let store = try await connectedStore()
            let context = ObjectContext(store: store, name: "devicesvc")
            context.mergePolicy = .objectTrump
            context.durability = .disk
            // The remote store blocks the calling thread for each round trip: on the context's queue, never the pool.
            try await context.perform {
                recording.insert(into: context)
                try context.save()
            }
            return nil
        } catch {
            // A connection that failed is dropped, and so is one opened with a model the service no longer serves
            // (it migrated its database): the next recording opens a new one, which reads the model again.
            switch error as? StoreError {
            case .unavailable?, .modelChanged?:
                store?.close()
                store = nil
            default:
                break
            }
            return "\(error)"
        }
    }

    private func connectedStore() async throws -> RemoteStore {
        if let store, store.client.connectionState.isConnected { return store }
        store?.close()
        let opened = try await RemoteStore.open(
            socketPath: socketPath,
            options: RemoteStore.Options(
                clientName: "devicesvc", callTimeout: callTimeout, reconnect: nil, changeStream: .off))
        store = opened
        return opened
    }
}
