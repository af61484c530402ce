import ContextBusSupport

/// `device.stats` → the device service's counters (PROTOCOL.md, "Devices that push": connections, chains by
/// outcome and error, queue depths per device; watches, reconnects and discoveries are not built yet).
///
/// ```
/// {"connections":1,"connects":7,"bluezAvailable":true,
///  "chains":{"started":12,"succeeded":9,"failed":{"408":1,"502":1},"cancelled":1,"running":0,"queued":0},
///  "queues":{"AA:BB:CC:DD:EE:01":{"running":1,"waiting":2}},
///  "recordings":{"saved":5,"failed":0}}
/// ```
public enum DeviceStats: RPCMethod {
    public typealias Params = EmptyObject
    public typealias Result = DeviceStatsResult
    public static let name = "device.stats"
}

/// The answer of `device.stats`; counters count from the service's start, the rest is now.
public struct DeviceStatsResult: JSONConvertible, Hashable {
    /// Clients connected to devicesvc now.
    public var connections: Int64
    /// Links chains set up (`connect` steps that succeeded).
    public var connects: Int64
    /// Whether BlueZ is on the system bus now (every `device.*` request answers `503` while it is not).
    public var bluezAvailable: Bool
    public var chains: ChainCounts
    /// Per device address (or `*` under `--serialize global`): chains running and waiting now; devices with
    /// neither are left out.
    public var queues: [String: QueueDepth]
    /// Chains with `record: true`: recordings saved into storesvc, and those that failed.
    public var recordingsSaved: Int64
    public var recordingsFailed: Int64
    /// Watches now (`device.watch` and `--watch`), reconnect attempts of their links from the start, and
    /// `device.discover`s running now.
    public var watches: Int64
    public var reconnects: Int64
    public var discoveries: Int64

    /// `device.run` chains by outcome.
    public struct ChainCounts: Sendable, Hashable {
        /// Chains accepted (queued), from the start.
        public var started: Int64
        public var succeeded: Int64
        /// Chains that failed, by the error code they were answered with (`"408"`, `"502"`, `"404"`, `"503"`).
        public var failed: [Int: Int64]
        /// Chains cancelled (answered `499`: `device.cancel`, `bus.cancel`, the client leaving, the service
        /// stopping).
        public var cancelled: Int64
        /// Chains running now, and waiting for their turn now.
        public var running: Int64
        public var queued: Int64

        public init(
            started: Int64 = 0, succeeded: Int64 = 0, failed: [Int: Int64] = [:], cancelled: Int64 = 0,
            running: Int64 = 0, queued: Int64 = 0
        ) {
            self.started = started
            self.succeeded = succeeded
            self.failed = failed
            self.cancelled = cancelled
            self.running = running
            self.queued = queued
        }
    }

    /// One device's queue: chains running (0 or 1 per device) and waiting.
    public struct QueueDepth: Sendable, Hashable {
        public var running: Int64
        public var waiting: Int64

        public init(running: Int64, waiting: Int64) {
            self.running = running
            self.waiting = waiting
        }
    }

    public init(
        connections: Int64, connects: Int64, bluezAvailable: Bool, chains: ChainCounts,
        queues: [String: QueueDepth] = [:], recordingsSaved: Int64 = 0, recordingsFailed: Int64 = 0,
        watches: Int64 = 0, reconnects: Int64 = 0, discoveries: Int64 = 0
    ) {
        self.connections = connections
        self.connects = connects
        self.bluezAvailable = bluezAvailable
        self.chains = chains
        self.queues = queues
        self.recordingsSaved = recordingsSaved
        self.recordingsFailed = recordingsFailed
        self.watches = watches
        self.reconnects = reconnects
        self.discoveries = discoveries
    }

    public init(json: JSONValue) throws(RPCError) {
        let fields = try JSONFields(json)
        connections = try fields.int64("connections")
        connects = try fields.int64("connects")
        bluezAvailable = try fields.bool("bluezAvailable")
        let chains = try fields.nested("chains")
        var failed: [Int: Int64] = [:]
        for (code, count) in try chains.object("failed") {
            guard let number = Int(code), let count = count.intValue else {
                throw chains.error("failed", "expected error codes mapped to counts")
            }
            failed[number] = count
        }
        self.chains = ChainCounts(
            started: try chains.int64("started"), succeeded: try chains.int64("succeeded"), failed: failed,
            cancelled: try chains.int64("cancelled"), running: try chains.int64("running"),
            queued: try chains.int64("queued"))
        var queues: [String: QueueDepth] = [:]
        let queueFields = try fields.nested("queues")
        for key in try fields.object("queues").keys {
            let queue = try queueFields.nested(key)
            queues[key] = QueueDepth(running: try queue.int64("running"), waiting: try queue.int64("waiting"))
        }
        self.queues = queues
        let recordings = try fields.nested("recordings")
        recordingsSaved = try recordings.int64("saved")
        recordingsFailed = try recordings.int64("failed")
        // Absent from a devicesvc that predates watches and discovery.
        watches = try fields.optionalInt64("watches") ?? 0
        reconnects = try fields.optionalInt64("reconnects") ?? 0
        discoveries = try fields.optionalInt64("discoveries") ?? 0
    }

    public var json: JSONValue {
        .object([
            "connections": .int(connections), "connects": .int(connects), "bluezAvailable": .bool(bluezAvailable),
            "chains": .object([
                "started": .int(chains.started), "succeeded": .int(chains.succeeded),
                "failed": .object(
                    Dictionary(uniqueKeysWithValues: chains.failed.map { (String($0.key), .int($0.value)) })),
                "cancelled": .int(chains.cancelled), "running": .int(chains.running), "queued": .int(chains.queued),
            ]),
            "queues": .object(
                queues.mapValues { .object(["running": .int($0.running), "waiting": .int($0.waiting)]) }),
            "recordings": .object(["saved": .int(recordingsSaved), "failed": .int(recordingsFailed)]),
            "watches": .int(watches), "reconnects": .int(reconnects), "discoveries": .int(discoveries),
        ])
    }
}
