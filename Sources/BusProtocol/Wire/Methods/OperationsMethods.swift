import ContextBusSupport

// The methods for operators (docs/protocol.md, "Operations"; additions to PROTOCOL.md): `bus.metrics` on every
// service, `store.backup` on storesvc. `device.stats` is in DeviceStatsMethod.swift.

/// `bus.metrics` → `{"text": "<Prometheus text exposition>"}`: the service's counters, gauges and histograms.
public enum BusMetrics: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = MetricsResult
    public static let name = "bus.metrics"
}

/// `{"text": "# HELP …"}`: the Prometheus text exposition format (version 0.0.4), every sample labelled with the
/// service's name (`service="storesvc"`).
public struct MetricsResult: JSONConvertible, Hashable {
    public var text: String

    public init(text: String) {
        self.text = text
    }

    public init(json: JSONValue) throws(RPCError) {
        text = try JSONFields(json).string("text")
    }

    public var json: JSONValue { .object(["text": .string(text)]) }
}

/// `store.backup` `{"path": "/var/lib/ctxbus/backups/store-2026-01-01.sqlite"}` → `{"path","txn","pages","bytes",
/// "milliseconds"}`: a consistent copy of the database, taken with SQLite's online backup API while the store
/// keeps serving.
public enum StoreBackup: RPCMethod {
    public typealias Params = BackupParams
    public typealias Result = BackupResult
    public static let name = "store.backup"
}

/// `{"path"}`: where the service writes the copy, an absolute path on the service's side.
public struct BackupParams: JSONConvertible, Hashable {
    public var path: String

    public init(path: String) {
        self.path = path
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        path = try fields.string("path")
        guard path.hasPrefix("/") else { throw fields.error("path", "must be an absolute path") }
        guard !path.utf8.contains(0) else { throw fields.error("path", "must not contain a NUL byte") }
    }

    public var json: JSONValue { .object(["path": .string(path)]) }
}

/// What `store.backup` wrote: the copy's path, its last transaction (every save acknowledged before the backup
/// began is in it), its pages and size, and how long it took.
public struct BackupResult: JSONConvertible, Hashable {
    public var path: String
    public var txn: Int64
    public var pages: Int64
    public var bytes: Int64
    public var milliseconds: Int64

    public init(path: String, txn: Int64, pages: Int64, bytes: Int64, milliseconds: Int64) {
        self.path = path
        self.txn = txn
        self.pages = pages
        self.bytes = bytes
        self.milliseconds = milliseconds
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        path = try fields.string("path")
        txn = try fields.int64("txn")
        pages = try fields.int64("pages")
        bytes = try fields.int64("bytes")
        milliseconds = try fields.int64("milliseconds")
    }

    public var json: JSONValue {
        .object([
            "path": .string(path), "txn": .int(txn), "pages": .int(pages), "bytes": .int(bytes),
            "milliseconds": .int(milliseconds),
        ])
    }
}
