import CContextBusSQLite
import ContextBusSupport

extension SQLiteConnection {
    /// Makes the connection's WAL time each of its syncs into `histogram` (for a connection opened through
    /// `WALWriteGathering`'s VFS; others ignore it). Call on the connection's thread, once the WAL is open.
    func timeWALSyncs(into histogram: LatencyHistogram) {
        var reference = Unmanaged.passUnretained(histogram)
        _ = sqlite3_file_control(handle, "main", WALWriteGathering.syncLatencyOpcode, &reference)
    }
}
