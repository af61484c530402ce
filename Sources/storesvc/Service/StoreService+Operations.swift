import ContextBusSQLite
import ContextBusServer
import ContextBusSupport
import ContextBusWire
import Dispatch
import Foundation

extension StoreService {
    /// Registers what operators use: `bus.metrics` (with the store's families, `StoreMetrics`) and `store.backup`.
    func registerOperationsHandlers() {
        let handlers = self.handlers
        let server = self.server
        let store = self.store
        let backups = self.backups
        let configuration = self.configuration
        operations.serve(server) {
            StoreMetrics.families(
                stats: handlers.stats(connections: server.connectionCount), store: store, backups: backups.counters,
                databasePath: configuration.databasePath)
        }
        let log = self.log
        server.register(StoreBackup.self, cancellation: .cooperative) { request, params, responder in
            backups.run { isStopping in
                let started = ContinuousClock.now
                log.info("backup to \(params.path): started", ["path": .string(params.path)])
                do throws(SQLiteStore.BackupError) {
                    let result = try store.backup(to: params.path) { !request.isCancelled && !isStopping() }
                    let elapsed = ContinuousClock.now - started
                    backups.finished(succeeded: true, after: elapsed)
                    let milliseconds =
                        elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
                    log.info(
                        "backup to \(params.path): txn \(result.txn), \(result.bytes) bytes in \(milliseconds) ms",
                        ["path": .string(params.path), "txn": .int(result.txn), "bytes": .int(result.bytes)])
                    responder.succeed(
                        BackupResult(
                            path: params.path, txn: result.txn, pages: Int64(result.pages), bytes: result.bytes,
                            milliseconds: milliseconds))
                } catch {
                    backups.finished(succeeded: false, after: ContinuousClock.now - started)
                    log.warning("backup to \(params.path): \(error)", ["path": .string(params.path)])
                    responder.fail(Self.rpcError(for: error, isStopping: isStopping()))
                }
            }
        }
    }

    /// The answer to a failed backup: the path's problem as `-32602` (`data.field` `path`), a cancellation as
    /// `499`, the service stopping as `503`, anything else `-32603` (logged).
    static func rpcError(for error: SQLiteStore.BackupError, isStopping: Bool) -> RPCError {
        switch error {
        case .destination(_, let reason): return .invalidParams(field: "path", message: reason)
        case .cancelled where isStopping: return .unavailable("storesvc is stopping; the backup was abandoned")
        case .cancelled: return .cancelled("the backup was cancelled")
        case .failed: return .internalError("the backup failed; storesvc's log says why")
        }
    }
}

/// Runs backups one at a time on a queue of their own (a second one waits for the first), and counts them.
final class BackupRunner: Sendable {
    private let queue = DispatchQueue(label: "storesvc.backup", qos: .utility)
    private let state = Locked(Counters())
    private let stopping = AtomicFlag()

    /// What the metrics report of backups.
    struct Counters: Sendable {
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        /// When the last successful backup ended (seconds since 1970), 0 before the first.
        var lastSuccess: Double = 0
        /// How long the last backup (either outcome) took.
        var lastDuration: Duration = .zero
        var running: Int64 = 0
    }

    var counters: Counters { state.withLock { $0 } }

    /// Runs `body` on the backup queue; `body` is told whether the service is stopping (it should then give up).
    func run(_ body: @escaping @Sendable (_ isStopping: @Sendable () -> Bool) -> Void) {
        let stopping = self.stopping
        queue.async { [self] in
            state.withLock { $0.running += 1 }
            body { stopping.isSet }
            state.withLock { $0.running -= 1 }
        }
    }

    func finished(succeeded: Bool, after duration: Duration) {
        state.withLock { counters in
            if succeeded {
                counters.succeeded += 1
                counters.lastSuccess = Date().timeIntervalSince1970
            } else {
                counters.failed += 1
            }
            counters.lastDuration = duration
        }
    }

    /// Makes running and queued backups give up, then waits until they have.
    func stop() {
        _ = stopping.setOnce()
        queue.sync {}
    }
}
