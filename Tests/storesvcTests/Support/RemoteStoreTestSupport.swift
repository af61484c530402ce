import Dispatch
import Foundation

@testable import ContextBusClient
@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// Runs blocking work (a `RemoteStore`'s synchronous calls, a context's `performAndWait`, process waits) on a
/// thread of its own and awaits it, so that no thread of the cooperative pool is blocked.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withLockedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Waits (up to a generous guard, not a timing assertion) until `condition` holds, without blocking the pool.
@discardableResult
func eventuallyAsync(timeout: Duration = .seconds(60), _ condition: @Sendable () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(10))
    }
    return true
}

/// The change sets a store delivered to `observeChanges`, in order.
final class ChangeRecorder: Sendable {
    private let changes = Locked<[ChangeSet]>([])
    private let observation: StoreObservation

    init(_ store: any PersistentStore) {
        let changes = self.changes
        observation = store.observeChanges { change in changes.withLock { $0.append(change) } }
    }

    var all: [ChangeSet] { changes.withLock { $0 } }
    var txns: [Int64] { all.map(\.txn) }
}

extension StoreServiceProcess {
    /// A `RemoteStore` on this service.
    func remoteStore(
        _ name: String = "remote", reconnect: BusClient.ReconnectPolicy? = BusClient.ReconnectPolicy()
    ) async throws -> RemoteStore {
        try await RemoteStore.open(
            socketPath: socketPath, options: RemoteStore.Options(clientName: name, reconnect: reconnect))
    }
}

/// A writer and a reader context, each on a `RemoteStore` of its own on one service; the reader merges
/// what the store's change stream brings.
struct WriterAndReader {
    let writer: ObjectContext
    let reader: ObjectContext
    let writerStore: RemoteStore
    let readerStore: RemoteStore

    /// Closes both stores.
    func close() {
        writerStore.close()
        readerStore.close()
    }
}

extension StoreServiceProcess {
    /// A writer context and a reader context (merging changes automatically) on two `RemoteStore`s.
    func writerAndReader() async throws -> WriterAndReader {
        let writerStore = try await remoteStore("writer")
        let readerStore: RemoteStore
        do {
            readerStore = try await remoteStore("reader")
        } catch {
            writerStore.close()
            throw error
        }
        let reader = ObjectContext(store: readerStore, name: "reader")
        reader.automaticallyMergesChanges = true
        return WriterAndReader(
            writer: ObjectContext(store: writerStore, name: "writer"), reader: reader, writerStore: writerStore,
            readerStore: readerStore)
    }
}

extension ObjectContext {
    /// Inserts and saves one `Device`; returns its permanent ID.
    func saveDevice(_ address: String, name: String? = nil) throws -> ObjectID {
        try performAndWait {
            let device = insert(entity: "Device")
            device["address", as: String.self] = address
            if let name { device["name", as: String.self] = name }
            try save()
            return device.objectID
        }
    }
}
