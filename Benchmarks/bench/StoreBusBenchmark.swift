import ContextBusClient
import ContextBusObjectGraph
import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Dispatch
import Foundation
@preconcurrency import Glibc
import Synchronization

/// `scripts/bench bus`: the store service over the bus next to Redis on the same machine, in one table.
///
/// It starts `storesvc` (release, beside this runner) on a temporary socket and database, and two
/// `redis-server`s on temporary Unix sockets with `--port 0`: one without persistence (GET, pub/sub), one with
/// `appendonly yes`, `appendfsync always` (durable SET). Every process is stopped by PID at the end, also when a
/// case fails.
///
/// - `store.get` round trips/s: blocking clients (one thread each, one request in flight, a pre-encoded request
///   like redis-benchmark's) and `BusClient.call` (one task per connection on the shared client loop), at 1 and
///   50 connections, next to `redis-benchmark -t get -c 1` / `-c 50` on the unsocketed Redis; at 50 connections
///   also one thread serving all 50 with `poll`, which is how redis-benchmark itself drives its connections.
/// - Durable one-object saves/s: 8 child processes of this runner (`bench bus` with `CTXBUS_BENCH_SAVE_CLIENT`
///   set), each one `BusClient` saving one `Device` at a time with `durability: disk`, next to
///   `redis-benchmark -t set -c 8` on the appendfsync-always Redis.
/// - Fan-out latency to 100 subscribers: a publisher sends one save (one `Reading`) per millisecond whose `chain`
///   value holds the monotonic send time; 100 subscriber connections (`store.subscribe` `Reading`, one thread
///   each, reading raw frames) take receive time − send time. The latency therefore includes the commit (with
///   `durability: disk`, the fsync; further runs save with `durability: memory`). Redis: the same publisher loop
///   sends `PUBLISH` with a payload of the same size as the `store.changed` frame, to 100 `SUBSCRIBE`d
///   connections read the same way. Both servers' publishers run open loop (one message per millisecond whatever
///   the answers do, answers read by a thread of their own) and closed loop (each message after the answer to the
///   previous one), and each row compares the same kind; besides the p50/p99 over every delivery, a row gives each
///   message's first delivery (the earliest of the subscribers), the publisher's answer time and each server's CPU.
enum StoreBusBenchmark {
    static let duration: Duration = .seconds(2)
    static let saveClients = 8
    /// 100, or `CTXBUS_BENCH_SUBSCRIBERS` (to separate the save path's latency from the fan-out's).
    static let subscribers = ProcessInfo.processInfo.environment["CTXBUS_BENCH_SUBSCRIBERS"].flatMap { Int($0) } ?? 100
    static let fanOutMessages = 2_000
    /// 1, or `CTXBUS_BENCH_DURABLE_ROUNDS`: further rounds of storesvc's raw-client run and SQLite alone, one after the
    /// other, each giving its own ratio (the median and range are printed): on a shared machine the disk's speed
    /// moves by several times within a minute, and only runs seconds apart share it.
    static let durableRounds = max(
        1, ProcessInfo.processInfo.environment["CTXBUS_BENCH_DURABLE_ROUNDS"].flatMap { Int($0) } ?? 1)
    /// More flags for the storesvc the suite starts, from `CTXBUS_BENCH_STORESVC_FLAGS` (space-separated, for
    /// example `--page-size 2048`); printed in the table's heading, so that a run with them is not taken for the
    /// defaults'.
    static let extraStoreFlags =
        ProcessInfo.processInfo.environment["CTXBUS_BENCH_STORESVC_FLAGS"]?.split(separator: " ").map(String.init) ?? []

    /// The parts of the suite a run measures.
    enum Part {
        /// `store.get` round trips at 1 and 50 connections.
        case gets
        /// Durable one-object saves from 8 processes, against Redis with `appendfsync always`.
        case durableSaves
        /// Fan-out latency to 100 subscribers, against Redis pub/sub.
        case fanOut
        /// `store.results` delivery to watchers against `store.changed` to as many subscribers.
        case watches
    }

    static func run() throws {
        try run([.gets, .durableSaves, .fanOut, .watches])
    }

    /// `bench buswatch`: only the live-query rows: `store.results` to 10 watchers (a limited list and a whole
    /// list) against `store.changed` to 10 subscribers, at 1,000 saves/s.
    static func runWatches() throws {
        try run([.watches])
    }

    /// `bench busfanout`: only the fan-out cases (storesvc disk and memory, Redis pub/sub), with storesvc's CPU
    /// time over each storesvc fan-out.
    static func runFanOut() throws {
        try run([.fanOut])
    }

    /// `bench busdurable`: only the durable saves from 8 processes and Redis's `appendfsync always` `SET`, with each
    /// server's CPU time over its run.
    static func runDurableSaves() throws {
        try run([.durableSaves])
    }

    private static func run(_ parts: Set<Part>) throws {
        if let socket = ProcessInfo.processInfo.environment["CTXBUS_BENCH_SAVE_CLIENT"] {
            try runSaveClient(socket: socket)
            return
        }
        let processes = ProcessGroup()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-bench-bus-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer {
            processes.stopAll()
            try? FileManager.default.removeItem(at: directory)
        }
        print(
            "bus: storesvc vs redis over Unix sockets, \(ProcessInfo.processInfo.activeProcessorCount) CPUs, "
                + "load before: \(loadAverage())"
                + (extraStoreFlags.isEmpty ? "" : ", storesvc flags: \(extraStoreFlags.joined(separator: " "))"))
        let store = directory.appendingPathComponent("store.sock").path
        let redis = directory.appendingPathComponent("redis.sock").path
        let durableRedis = directory.appendingPathComponent("redis-aof.sock").path
        let services = try startServices(
            directory: directory, store: store, redis: redis, durableRedis: durableRedis, in: processes)

        var rows: [[String]] = []
        if parts.contains(.gets) {
            try appendGetRows(to: &rows, store: store, redis: redis)
        }
        if parts.contains(.durableSaves) {
            try appendDurableSaveRows(
                to: &rows, store: store, durableRedis: durableRedis, services: services, directory: directory,
                processes: processes)
        }
        if parts.contains(.fanOut) {
            try appendFanOutRows(to: &rows, store: store, redis: redis, services: services)
        }
        printTable(["case", "storesvc raw client", "storesvc BusClient", "redis", "ratio vs redis (goal)"], rows)
        if parts.contains(.watches) {
            printTable(
                ["live queries (\(watchers) connections, ~1000 saves/s)", "p50 (ms)", "p99 (ms)", "ratio (goal)"],
                try watchRows(store: store))
        }
        if parts.contains(.durableSaves) {
            print(
                "  durable saves: \(saveClients) child processes of this runner, each a blocking socket (raw) or a "
                    + "BusClient, one durability-disk insert at a time; redis: redis-benchmark -c \(saveClients) -t set "
                    + "-d 100, appendfsync always")
        }
        if parts.contains(.fanOut) {
            print(
                "  fan-out: \(fanOutMessages) messages at ~1000/s, store.changed frames and a redis payload of the same "
                    + "size; storesvc latency = event received − save sent, commit included (saves with durability disk, "
                    + "then memory)")
        }
        if parts.contains(.watches) {
            print(
                "  live queries: \(fanOutMessages) one-Reading saves (durability disk, open loop); latency = event "
                    + "received − save sent; ratio = store.changed p99 / store.results p99 (goal ≥ 0.5: within 2×)")
        }
        print("  load after: \(loadAverage())")
    }

    /// Connections per live-query case.
    static let watchers = 10

    /// `store.changed` to `watchers` subscribers, then `store.results` to `watchers` watchers of a window (sorted by
    /// `chain` descending, limit 10: each save goes in at the top and pushes the last out) and of the whole list
    /// (sorted ascending, no limit: each save goes at the end of thousands), both edited in place from the change
    /// sets.
    private static func watchRows(store: String) throws -> [[String]] {
        let subscribe = #"{"jsonrpc":"2.0","id":2,"method":"store.subscribe","params":{"entity":"Reading"}}"#
        let limited =
            #"{"jsonrpc":"2.0","id":2,"method":"store.watch","params":{"entity":"Reading","sort":[{"key":"chain","ascending":false}],"limit":10}}"#
        let whole =
            #"{"jsonrpc":"2.0","id":2,"method":"store.watch","params":{"entity":"Reading","sort":[{"key":"chain"}]}}"#
        print("  live queries: store.changed…")
        let changed = try storeFanOut(
            socket: store, durability: "disk", pacing: .openLoop, peerCount: watchers, request: subscribe
        ).latencies
        var rows = [["store.changed to \(watchers) subscribers", ms(changed.p50), ms(changed.p99), ""]]
        for (name, request) in [
            ("store.results, newest 10", limited), ("store.results, whole list", whole),
        ] {
            print("  live queries: \(name)…")
            let results = try storeFanOut(
                socket: store, durability: "disk", pacing: .openLoop, peerCount: watchers, request: request
            ).latencies
            rows.append([
                "\(name) to \(watchers) watchers", ms(results.p50), ms(results.p99),
                ratio(changed.p99, results.p99, goal: "≥ 0.5"),
            ])
        }
        return rows
    }

    /// The fan-out rows: storesvc with disk and memory durability, Redis pub/sub, both publishers.
    private static func appendFanOutRows(
        to rows: inout [[String]], store: String, redis: String, services: Services
    ) throws {
        // storesvc: disk and memory durability with an open-loop publisher, memory with a closed-loop one; Redis with
        // both publishers. Each row compares the same publisher.
        var phases: [(name: String, run: (latencies: Percentiles, acks: Percentiles, messageSize: Int), cpu: Double?)] =
            []
        for (durability, pacing) in [
            ("disk", PublisherPacing.openLoop), ("memory", .openLoop), ("memory", .closedLoop),
        ] {
            let cpu = ProcessCPUTime(pid: services.storesvc)
            let run = try storeFanOut(socket: store, durability: durability, pacing: pacing)
            phases.append(("\(durability), \(pacing.rawValue)", run, cpu.elapsed()))
        }
        var redisRuns: [PublisherPacing: (latencies: Percentiles, acks: Percentiles, cpu: Double?)] = [:]
        for pacing in [PublisherPacing.openLoop, .closedLoop] {
            let cpu = ProcessCPUTime(pid: services.redis)
            let run = try redisFanOut(socket: redis, payloadSize: phases[0].run.messageSize, pacing: pacing)
            redisRuns[pacing] = (run.latencies, run.acks, cpu.elapsed())
        }
        for (name, run, cpu) in phases {
            guard
                let redisRun = redisRuns[name.hasSuffix(PublisherPacing.closedLoop.rawValue) ? .closedLoop : .openLoop]
            else { continue }
            let redisFanOut = redisRun.latencies
            rows.append([
                "fan-out to \(subscribers) (\(name)), p50 (ms)", "-", ms(run.latencies.p50), ms(redisFanOut.p50), "",
            ])
            rows.append([
                "fan-out to \(subscribers) (\(name)), p99 (ms)", "-", ms(run.latencies.p99), ms(redisFanOut.p99),
                ratio(redisFanOut.p99, run.latencies.p99, goal: "≥ 0.5 (p99 within 2×)"),
            ])
            rows.append([
                "  (first subscriber of each message, p50 / p99 ms)", "-",
                "\(ms(run.latencies.firstP50)) / \(ms(run.latencies.firstP99))",
                "\(ms(redisFanOut.firstP50)) / \(ms(redisFanOut.firstP99))", "",
            ])
            rows.append([
                "  (publisher's answer, p50 / p99 ms)", "-", "\(ms(run.acks.p50)) / \(ms(run.acks.p99))",
                "\(ms(redisRun.acks.p50)) / \(ms(redisRun.acks.p99))", "",
            ])
            rows.append([
                "  (server CPU s over the fan-out)", "-", cpuSeconds(cpu), cpuSeconds(redisRun.cpu), "",
            ])
        }
        rows.append(["  (store.changed frame bytes)", "-", "\(phases[0].run.messageSize)", "", ""])
    }

    /// The `store.get` rows.
    private static func appendGetRows(to rows: inout [[String]], store: String, redis: String) throws {
        let seeded = try seedDevice(socket: store)
        let getFrame = frame(#"{"jsonrpc":"2.0","id":1,"method":"store.get","params":{"ids":["\#(seeded)"]}}"#)
        let redisGet1 = try redisBenchmark(socket: redis, tests: "set,get", clients: 1, requests: 100_000)
        rows.append([
            "GET, 1 connection", rate(try rawRoundTrips(socket: store, frame: getFrame, connections: 1)),
            rate(try busClientGets(socket: store, id: seeded, connections: 1)), rate(redisGet1["GET"]), "",
        ])
        let redisGet50 = try redisBenchmark(socket: redis, tests: "set,get", clients: 50, requests: 400_000)
        let raw50 = try rawRoundTrips(socket: store, frame: getFrame, connections: 50)
        let bus50 = try busClientGets(socket: store, id: seeded, connections: 50)
        let multiplexed50 = try multiplexedRoundTrips(socket: store, frame: getFrame, connections: 50)
        rows.append([
            "GET, 50 connections", rate(raw50), rate(bus50), rate(redisGet50["GET"]),
            ratio(max(raw50, bus50), redisGet50["GET"], goal: "≥ 0.5"),
        ])
        rows.append([
            "GET, 50 connections, one client thread", rate(multiplexed50), "-", rate(redisGet50["GET"]),
            ratio(multiplexed50, redisGet50["GET"], goal: "≥ 0.5"),
        ])
    }

    /// The durable-save row, and each server's CPU time over its run.
    private static func appendDurableSaveRows(
        to rows: inout [[String]], store: String, durableRedis: String, services: Services, directory: URL,
        processes: ProcessGroup
    ) throws {
        let raw = try measuredDurableSaves(.raw, socket: store, services: services, directory: directory, in: processes)
        // The floor: SQLite alone writing the same saves in groups as large as storesvc's, on the same disk, right
        // after storesvc's raw-client run (the disk's speed drifts between runs seconds apart on a shared machine).
        func floorRate(
            after raw: (rate: Double, savesPerCommit: Double?), round: Int
        ) throws -> (
            group: Int, saves: Double, savesPerCPUSecond: Double
        ) {
            let group = max(1, Int((raw.savesPerCommit ?? 1).rounded()))
            let rate = try RawSQLite.withStoreSchema(
                path: directory.appendingPathComponent("floor-\(round).sqlite").path, model: .deviceReadings,
                pageSize: storePageSize
            ).deviceSaveRate(
                savesPerCommit: group, clients: saveClients,
                historyJSON: RawSQLite.lastHistoryJSON(
                    ofStoreAt: directory.appendingPathComponent("store.sqlite").path),
                duration: duration)
            return (group, rate.saves, rate.savesPerCPUSecond)
        }
        let floor = try floorRate(after: (raw.rate, raw.savesPerCommit), round: 0)
        let group = floor.group
        var rounds = [
            (rate: raw.rate / floor.saves, cpu: raw.serverSecondsPerSave.map { $0 * floor.savesPerCPUSecond })
        ]
        for round in 1..<durableRounds {
            let again = try measuredDurableSaves(
                .raw, socket: store, services: services, directory: directory, in: processes)
            let againFloor = try floorRate(after: (again.rate, again.savesPerCommit), round: round)
            rounds.append(
                (again.rate / againFloor.saves, again.serverSecondsPerSave.map { $0 * againFloor.savesPerCPUSecond }))
        }
        let bus = try measuredDurableSaves(
            .busClient, socket: store, services: services, directory: directory, in: processes)
        let redisCPU = ProcessCPUTime(pid: services.durableRedis)
        let redisSet = try redisBenchmark(socket: durableRedis, tests: "set", clients: saveClients, requests: 100_000)
        let redisSeconds = redisCPU.elapsed()
        rows.append([
            "durable 1-object saves, \(saveClients) clients", rate(raw.rate), rate(bus.rate), rate(redisSet["SET"]),
            ratio(max(raw.rate, bus.rate), redisSet["SET"], goal: "≥ 1"),
        ])
        rows.append([
            "  (server CPU µs per save / SET)", raw.serverMicroseconds, bus.serverMicroseconds,
            microsecondsPer(redisSeconds, 100_000), "",
        ])
        rows.append(["  (saves per commit)", perCommit(raw.savesPerCommit), perCommit(bus.savesPerCommit), "", ""])
        rows.append(["  (WAL frames per commit)", raw.framesPerCommit, bus.framesPerCommit, "", ""])
        rows.append(["  (WAL file writes per commit)", raw.writesPerCommit, bus.writesPerCommit, "", ""])
        rows.append([
            "  (SQLite alone: the same writes, \(group) saves per commit, 1 thread)", rate(floor.saves), "", "",
            ratio(floor.saves, redisSet["SET"], goal: "no goal"),
        ])
        rows.append([
            "  (its CPU µs per save)", microsecondsPer(1 / floor.savesPerCPUSecond, 1), "", "", "",
        ])
        rows.append([
            "  (storesvc ÷ SQLite alone: saves/s; CPU per save in the last column)",
            ratio(raw.rate, floor.saves, goal: "≥ 0.9"), "", "",
            raw.serverSecondsPerSave.map { ratio($0, 1 / floor.savesPerCPUSecond, goal: "≤ 1.5") } ?? "?",
        ])
        if rounds.count > 1 {
            func spread(_ values: [Double]) -> String {
                let sorted = values.sorted()
                guard let low = sorted.first, let high = sorted.last else { return "?" }
                return String(format: "%.2f (%.2f–%.2f)", sorted[sorted.count / 2], low, high)
            }
            rows.append([
                "  (the same over \(rounds.count) rounds, each beside its own floor: median (range))",
                spread(rounds.map(\.rate)), "", "", spread(rounds.compactMap(\.cpu)),
            ])
        }
    }

    /// The page size storesvc was started with (`--page-size` in `CTXBUS_BENCH_STORESVC_FLAGS`), for the floor.
    private static var storePageSize: Int? {
        guard let flag = extraStoreFlags.firstIndex(of: "--page-size"), flag + 1 < extraStoreFlags.count else {
            return nil
        }
        return Int(extraStoreFlags[flag + 1])
    }

    private static func perCommit(_ value: Double?) -> String {
        value.map { String(format: "%.2f", $0) } ?? "?"
    }

    /// Durable saves from `saveClients` child processes of one kind, with storesvc's CPU per save, and its saves
    /// and WAL frames and WAL file writes per commit, over the run.
    private static func measuredDurableSaves(
        _ kind: SaveClientKind, socket: String, services: Services, directory: URL, in processes: ProcessGroup
    ) throws -> (
        rate: Double, serverMicroseconds: String, serverSecondsPerSave: Double?, savesPerCommit: Double?,
        framesPerCommit: String, writesPerCommit: String
    ) {
        let storeCPU = ProcessCPUTime(pid: services.storesvc)
        let before = try commitCounts(socket: socket)
        let saves = try durableSaves(kind, socket: socket, directory: directory, in: processes)
        let storeSeconds = storeCPU.elapsed()
        let after = try commitCounts(socket: socket)
        let commits = after.commits - before.commits
        func perCommit(_ count: Int64) -> String {
            commits > 0 ? String(format: "%.2f", Double(count) / Double(commits)) : "?"
        }
        return (
            saves, microsecondsPer(storeSeconds, saves * duration.seconds),
            storeSeconds.map { $0 / (saves * duration.seconds) },
            commits > 0 ? Double(after.saves - before.saves) / Double(commits) : nil,
            perCommit(after.walFrames - before.walFrames), perCommit(after.walWrites - before.walWrites)
        )
    }

    /// `store.stats`' commits, saves, WAL frames and WAL file writes so far.
    private static func commitCounts(
        socket: String
    ) throws -> (commits: Int64, saves: Int64, walFrames: Int64, walWrites: Int64) {
        let peer = try BenchSocket(path: socket)
        try peer.hello()
        peer.write(frame(#"{"jsonrpc":"2.0","id":3,"method":"store.stats"}"#))
        guard let answer = peer.readFrame(),
            let object = try JSONSerialization.jsonObject(with: Data(answer)) as? [String: Any],
            let result = object["result"] as? [String: Any],
            let commits = (result["commits"] as? NSNumber)?.int64Value,
            let saves = (result["saves"] as? NSNumber)?.int64Value,
            let walFrames = (result["walFrames"] as? NSNumber)?.int64Value,
            let walWrites = (result["walWrites"] as? NSNumber)?.int64Value
        else { throw BenchError("store.stats failed") }
        return (commits, saves, walFrames, walWrites)
    }

    // MARK: - Services

    /// The PIDs of the servers a run started.
    struct Services {
        let storesvc: pid_t
        /// The Redis without persistence (GET, pub/sub).
        let redis: pid_t
        /// The Redis with `appendfsync always` (durable SET).
        let durableRedis: pid_t
    }

    /// Starts storesvc and the two Redis servers.
    private static func startServices(
        directory: URL, store: String, redis: String, durableRedis: String, in processes: ProcessGroup
    ) throws -> Services {
        let binaryDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let storesvc = binaryDirectory.appendingPathComponent("storesvc").path
        guard FileManager.default.isExecutableFile(atPath: storesvc) else {
            throw BenchError("no storesvc beside the runner at \(storesvc); scripts/bench builds it")
        }
        let storesvcPID = try processes.start(
            storesvc,
            [
                "--socket", store, "--database", directory.appendingPathComponent("store.sqlite").path, "--log-level",
                "warning",
            ] + extraStoreFlags)
        let redisServer = try executable("redis-server")
        let aof = directory.appendingPathComponent("aof")
        try FileManager.default.createDirectory(at: aof, withIntermediateDirectories: true)
        let redisPID = try processes.start(
            redisServer,
            [
                "--port", "0", "--unixsocket", redis, "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
                "--dir", directory.path,
            ])
        let durableRedisPID = try processes.start(
            redisServer,
            [
                "--port", "0", "--unixsocket", durableRedis, "--unixsocketperm", "700", "--save", "", "--appendonly",
                "yes", "--appendfsync", "always", "--dir", aof.path,
            ])
        for socket in [store, redis, durableRedis] {
            let deadline = ContinuousClock.now + .seconds(30)
            while (try? BenchSocket(path: socket)) == nil {
                guard ContinuousClock.now < deadline else { throw BenchError("nothing listens at \(socket)") }
                usleep(20_000)
            }
        }
        return Services(storesvc: storesvcPID, redis: redisPID, durableRedis: durableRedisPID)
    }

    private static func executable(_ name: String) throws -> String {
        for directory in ["/usr/bin", "/usr/local/bin", "/usr/sbin"] {
            let path = directory + "/" + name
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw BenchError("\(name) is not installed (Debian: apt-get install redis-server redis-tools)")
    }

    /// Runs redis-benchmark with `--csv`; returns requests/s per test name.
    private static func redisBenchmark(
        socket: String, tests: String, clients: Int, requests: Int
    ) throws -> [String: Double] {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("redis-bench-\(getpid()).csv").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let status = try ChildProcess.run(
            try executable("redis-benchmark"),
            ["-s", socket, "-c", "\(clients)", "-n", "\(requests)", "-t", tests, "-d", "100", "--csv"],
            standardOutput: output)
        guard status == 0 else { throw BenchError("redis-benchmark exited with \(status)") }
        var rates: [String: Double] = [:]
        for line in try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            if fields.count >= 2, let value = Double(fields[1]) { rates[fields[0]] = value }
        }
        return rates
    }

    // MARK: - store.get

    private static func seedDevice(socket: String) throws -> String {
        let peer = try BenchSocket(path: socket)
        try peer.hello()
        peer.write(
            frame(
                #"{"jsonrpc":"2.0","id":2,"method":"store.save","params":{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:BB:CC:DD:EE:FF","name":"bench thermometer","connected":true}}]}}"#
            ))
        guard let answer = peer.readFrame(), let text = String(bytes: answer, encoding: .utf8),
            let range = text.range(of: #""d":""#), let end = text[range.upperBound...].firstIndex(of: "\"")
        else { throw BenchError("seeding a Device failed") }
        return String(text[range.upperBound..<end])
    }

    /// Blocking peers, one thread each, one pre-encoded request in flight.
    private static func rawRoundTrips(socket: String, frame: [UInt8], connections: Int) throws -> Double {
        let peers = try (0..<connections).map { _ in try BenchSocket(path: socket) }
        for peer in peers { try peer.hello() }
        let total = Atomic<Int>(0)
        let start = ContinuousClock.now
        let end = start + duration
        let finished = DispatchGroup()
        for peer in peers {
            finished.enter()
            Thread {
                defer { finished.leave() }
                var count = 0
                repeat {
                    for _ in 0..<32 {
                        peer.write(frame)
                        guard peer.readFrame() != nil else { return }
                    }
                    count += 32
                } while ContinuousClock.now < end
                total.add(count, ordering: .relaxed)
            }.start()
        }
        finished.wait()
        return Double(total.load(ordering: .relaxed)) / (ContinuousClock.now - start).seconds
    }

    /// One thread serving every connection with `poll`, one pre-encoded request in flight per connection: the way
    /// redis-benchmark drives Redis (one thread, an event loop over its clients), so that the client's own
    /// thread switches do not weigh on the shared CPUs more for one server than for the other.
    private static func multiplexedRoundTrips(socket: String, frame: [UInt8], connections: Int) throws -> Double {
        let peers = try (0..<connections).map { _ in try BenchSocket(path: socket) }
        for peer in peers { try peer.hello() }
        var descriptors = peers.map { pollfd(fd: $0.fileDescriptor, events: Int16(POLLIN), revents: 0) }
        let start = ContinuousClock.now
        let end = start + duration
        var count = 0
        for peer in peers { peer.write(frame) }
        var inFlight = peers.count
        while inFlight > 0 {
            let ready = poll(&descriptors, nfds_t(descriptors.count), 1_000)
            guard ready > 0 else { throw BenchError("no store.get answer within a second") }
            let running = ContinuousClock.now < end
            for index in descriptors.indices where descriptors[index].revents != 0 {
                guard descriptors[index].fd >= 0 else { continue }
                guard peers[index].readFrame() != nil else { throw BenchError("a store.get connection closed") }
                count += 1
                if running {
                    peers[index].write(frame)
                } else {
                    descriptors[index].fd = -1  // drained: poll ignores it from now on
                    inFlight -= 1
                }
            }
        }
        return Double(count) / (ContinuousClock.now - start).seconds
    }

    /// `BusClient.call(StoreGet.self, …)`, one task per client, on the shared client loop.
    private static func busClientGets(socket: String, id: String, connections: Int) throws -> Double {
        let objectID = ObjectID(string: id)!
        return try DeviceBenchmark.blocking {
            var clients: [BusClient] = []
            for index in 0..<connections {
                let client = try await BusClient.connect(to: socket, clientName: "bench-get-\(index)")
                client.model = .deviceReadings  // store.get's objects are read with the service's model
                clients.append(client)
            }
            defer { for client in clients { client.close() } }
            let start = ContinuousClock.now
            let end = start + duration
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in clients {
                    group.addTask {
                        var count = 0
                        repeat {
                            for _ in 0..<32 { _ = try await client.call(StoreGet.self, GetParams(ids: [objectID])) }
                            count += 32
                        } while ContinuousClock.now < end
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            return Double(total) / (ContinuousClock.now - start).seconds
        }
    }

    // MARK: - Durable saves from 8 processes

    /// How a durable-save child process talks to storesvc.
    enum SaveClientKind: String {
        /// A blocking socket, one pre-encoded save in flight (as redis-benchmark sends its commands).
        case raw
        /// `BusClient.callAndWait`.
        case busClient = "busclient"
    }

    private static func durableSaves(
        _ kind: SaveClientKind, socket: String, directory: URL, in processes: ProcessGroup
    ) throws -> Double {
        let outputs = (0..<saveClients).map { directory.appendingPathComponent("save-client-\($0).out").path }
        setenv("CTXBUS_BENCH_SAVE_CLIENT", socket, 1)
        setenv("CTXBUS_BENCH_SAVE_CLIENT_KIND", kind.rawValue, 1)
        defer {
            unsetenv("CTXBUS_BENCH_SAVE_CLIENT")
            unsetenv("CTXBUS_BENCH_SAVE_CLIENT_KIND")
        }
        let children = try outputs.map { output in
            try processes.start(CommandLine.arguments[0], ["bus"], standardOutput: output)
        }
        var total = 0.0
        for (child, output) in zip(children, outputs) {
            let status = processes.wait(child)
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            guard status == 0, let rate = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchError("save client \(child) exited with \(status): \(text)")
            }
            total += rate
        }
        return total
    }

    /// Child mode: one durable one-object save at a time for `duration`, over a `BusClient` or a blocking socket
    /// (`CTXBUS_BENCH_SAVE_CLIENT_KIND`); prints saves/s.
    private static func runSaveClient(socket: String) throws {
        if ProcessInfo.processInfo.environment["CTXBUS_BENCH_SAVE_CLIENT_KIND"] == SaveClientKind.raw.rawValue {
            try runRawSaveClient(socket: socket)
            return
        }
        let client = try DeviceBenchmark.blocking {
            try await BusClient.connect(to: socket, clientName: "bench-save-\(getpid())")
        }
        defer { client.close() }
        let pid = getpid()
        // Warm up (connection, first commit), then measure.
        for i in 0..<20 { _ = try client.callAndWait(StoreSave.self, saveParams(pid: pid, index: -i - 1)) }
        let start = ContinuousClock.now
        let end = start + duration
        var count = 0
        repeat {
            _ = try client.callAndWait(StoreSave.self, saveParams(pid: pid, index: count))
            count += 1
        } while ContinuousClock.now < end
        print(Double(count) / (ContinuousClock.now - start).seconds)
    }

    /// Child mode over a blocking socket: each save's frame is the same text with the device's address changed.
    private static func runRawSaveClient(socket: String) throws {
        let peer = try BenchSocket(path: socket)
        try peer.hello()
        let pid = getpid()
        func save(_ index: Int) throws {
            peer.write(
                frame(
                    #"{"jsonrpc":"2.0","id":\#(index + 100),"method":"store.save","params":{"insert":[{"entity":"Device","ref":"d","values":{"address":"\#(pid):\#(index)","name":"bench device"}}],"durability":"disk"}}"#
                ))
            guard let answer = peer.readFrame(), !answer.starts(with: Array(#"{"jsonrpc":"2.0","error""#.utf8)),
                String(decoding: answer, as: UTF8.self).contains(#""result""#)
            else { throw BenchError("a raw durable save failed") }
        }
        for index in 0..<20 { try save(-index - 1) }
        let start = ContinuousClock.now
        let end = start + duration
        var count = 0
        repeat {
            try save(count)
            count += 1
        } while ContinuousClock.now < end
        print(Double(count) / (ContinuousClock.now - start).seconds)
    }

    private static func saveParams(pid: Int32, index: Int) -> SaveRequest {
        SaveRequest(
            inserts: [
                .init(
                    id: ObjectID(entity: "Device", temporaryReference: "d"),
                    values: ["address": .string("\(pid):\(index)"), "name": .string("bench device")])
            ], durability: .disk)
    }

    // MARK: - Fan-out

    /// How the fan-out's publisher treats the answers to its messages (the same for both servers).
    enum PublisherPacing: String {
        /// One message per millisecond whatever the answers do; the answers are read by a thread of their own. A
        /// server that stalls finds every message sent meanwhile waiting (no coordinated omission).
        case openLoop = "open loop"
        /// One message per millisecond, but each only after the answer to the one before (a stalled server delays
        /// the next message, whose stamp is taken when it is sent).
        case closedLoop = "closed loop"
    }

    /// `peerCount` connections (default `subscribers`) each send `request` (default a `store.subscribe` of every
    /// `Reading`), then a publisher saves `fanOutMessages` readings; the latencies are of the events carrying them.
    private static func storeFanOut(
        socket: String, durability: String, pacing: PublisherPacing, peerCount: Int = subscribers,
        request: String = #"{"jsonrpc":"2.0","id":2,"method":"store.subscribe","params":{"entity":"Reading"}}"#
    ) throws -> (latencies: Percentiles, acks: Percentiles, messageSize: Int) {
        let peers = try (0..<peerCount).map { _ in try BenchSocket(path: socket) }
        for peer in peers {
            try peer.hello()
            peer.write(frame(request))
            guard peer.readFrame() != nil else { throw BenchError("\(request) failed") }
        }
        let publisher = try BenchSocket(path: socket)
        try publisher.hello()
        let sizes = Atomic<Int>(0)
        let last = LastStamp()
        let collected = collectLatencies(peers: peers, expected: fanOutMessages, last: last) { peer in
            guard let bytes = peer.readFrame() else { return nil }
            sizes.store(bytes.count + 4, ordering: .relaxed)
            return bytes
        }
        // Answers come in order (one connection's saves are applied in order): the i-th is save i's.
        let acks = try publish(count: fanOutMessages, pacing: pacing, readAnswer: { publisher.readFrame() != nil }) {
            index, stamp in
            if index == fanOutMessages - 1 { last.value.store(stamp, ordering: .releasing) }
            publisher.write(
                frame(
                    #"{"jsonrpc":"2.0","id":\#(index + 10),"method":"store.save","params":{"insert":[{"entity":"Reading","ref":"r","values":{"characteristic":"00002a19-0000-1000-8000-00805f9b34fb","value":"ZA==","time":"2026-11-22T03:00:00.000Z","chain":"T=\#(stamp);"}}],"durability":"\#(durability)"}}"#
                ))
        }
        return (try collected(), acks, sizes.load(ordering: .relaxed))
    }

    private static func redisFanOut(
        socket: String, payloadSize: Int, pacing: PublisherPacing
    ) throws -> (latencies: Percentiles, acks: Percentiles) {
        let peers = try (0..<subscribers).map { _ in try BenchSocket(path: socket) }
        for peer in peers {
            peer.write(Array("*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nbench\r\n".utf8))
            guard peer.readRESPMessage() != nil else { throw BenchError("SUBSCRIBE failed") }
        }
        let publisher = try BenchSocket(path: socket)
        let collected = collectLatencies(peers: peers, expected: fanOutMessages) { $0.readRESPMessage() }
        let acks = try publish(
            count: fanOutMessages, pacing: pacing, readAnswer: { publisher.readRESPMessage() != nil }
        ) { _, stamp in
            var payload = "T=\(stamp);"
            payload += String(repeating: "x", count: max(0, payloadSize - payload.utf8.count))
            publisher.write(
                Array("*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$\(payload.utf8.count)\r\n\(payload)\r\n".utf8))
        }
        return (try collected(), acks)
    }

    /// Sends `count` messages, one per millisecond on a monotonic schedule (`send` gets the index and the send time
    /// in nanoseconds), paced as `pacing` says; returns the percentiles of answer time − send time. `readAnswer`
    /// reads one answer (they come in order).
    private static func publish(
        count: Int, pacing: PublisherPacing, readAnswer: @escaping @Sendable () -> Bool, send: (Int, UInt64) -> Void
    ) throws -> Percentiles {
        let stamps = Mutex<[UInt64]>([])
        let answers = Mutex<[UInt64]>([])
        let drained = DispatchGroup()
        if pacing == .openLoop {
            drained.enter()
            Thread {
                defer { drained.leave() }
                for index in 0..<count {
                    guard readAnswer() else { return }
                    let now = monotonicNanoseconds()
                    while stamps.withLock({ $0.count }) <= index { usleep(100) }
                    let sent = stamps.withLock { $0[index] }
                    answers.withLock { $0.append(now - sent) }
                }
            }.start()
        }
        publish(count: count) { index, stamp in
            stamps.withLock { $0.append(stamp) }
            send(index, stamp)
            if pacing == .closedLoop, readAnswer() {
                let now = monotonicNanoseconds()
                answers.withLock { $0.append(now - stamp) }
            }
        }
        drained.wait()
        let times = answers.withLock { $0 }.sorted()
        guard !times.isEmpty else { throw BenchError("no message was answered") }
        return Percentiles(
            p50: Double(times[times.count / 2]) / 1e6,
            p99: Double(times[min(times.count - 1, times.count * 99 / 100)]) / 1e6, count: times.count)
    }

    /// Sends `count` messages, one per millisecond on a monotonic schedule; `send` gets the index and the
    /// send time in nanoseconds.
    private static func publish(count: Int, send: (Int, UInt64) -> Void) {
        let start = monotonicNanoseconds()
        for index in 0..<count {
            let due = start + UInt64(index) * 1_000_000
            while true {
                let now = monotonicNanoseconds()
                if now >= due { break }
                usleep(UInt32(min(1_000, (due - now) / 1_000)))
            }
            send(index, monotonicNanoseconds())
        }
    }

    /// Starts one reader thread per peer; the returned function waits for them and gives the percentiles of
    /// receive time − the `T=<ns>;` stamp in each message, over every delivery, and over each message's first
    /// delivery (its earliest receipt among the peers: how late the server began to deliver it, plus one reader's
    /// wake-up, apart from how late the other readers were scheduled).
    private static func collectLatencies(
        peers: [BenchSocket], expected: Int, last: LastStamp? = nil, read: @escaping @Sendable (BenchSocket) -> [UInt8]?
    ) -> () throws -> Percentiles {
        let samples = Mutex<[UInt64]>([])
        let first = Mutex<[UInt64: UInt64]>([:])
        let finished = DispatchGroup()
        for peer in peers {
            finished.enter()
            Thread {
                defer { finished.leave() }
                var mine: [(stamp: UInt64, latency: UInt64)] = []
                mine.reserveCapacity(expected)
                reading: while mine.count < expected, let message = read(peer) {
                    let now = monotonicNanoseconds()
                    for stamp in stamps(in: message) where now >= stamp {
                        mine.append((stamp, now - stamp))
                        if let last, stamp == last.value.load(ordering: .acquiring) { break reading }
                    }
                }
                samples.withLock { $0 += mine.map(\.latency) }
                first.withLock { first in
                    for (stamp, latency) in mine { first[stamp] = min(first[stamp] ?? .max, latency) }
                }
            }.start()
        }
        return {
            guard finished.wait(timeout: .now() + 60) == .success else {
                let received = samples.withLock { $0.count }
                throw BenchError(
                    "subscribers did not receive every message within 60 s (\(received) deliveries from the peers "
                        + "that finished, of \(expected) each)")
            }
            let all = samples.withLock { $0 }.sorted()
            let firsts = first.withLock { $0 }.values.sorted()
            guard !all.isEmpty else { throw BenchError("no fan-out samples") }
            func at(_ fraction: Double, of values: [UInt64]) -> Double {
                Double(values[min(values.count - 1, Int(Double(values.count) * fraction))]) / 1e6
            }
            return Percentiles(
                p50: at(0.5, of: all), p99: at(0.99, of: all), count: all.count, firstP50: at(0.5, of: firsts),
                firstP99: at(0.99, of: firsts))
        }
    }

    /// Every number after `T=` up to `;`, in order (a live query's event may carry several readings).
    private static func stamps(in message: [UInt8]) -> [UInt64] {
        var found: [UInt64] = []
        var index = 0
        while index + 2 < message.count {
            if message[index] == UInt8(ascii: "T"), message[index + 1] == UInt8(ascii: "=") {
                var value: UInt64 = 0
                var cursor = index + 2
                while cursor < message.count, message[cursor] >= 0x30, message[cursor] <= 0x39 {
                    value = value * 10 + UInt64(message[cursor] - 0x30)
                    cursor += 1
                }
                if cursor < message.count, message[cursor] == UInt8(ascii: ";") { found.append(value) }
                index = cursor
            } else {
                index += 1
            }
        }
        return found
    }

    /// The stamp of the last message a publisher sent (0 until it is sent): a live query's reader stops at the
    /// event that carries it, since a list fetched again may stand for several transactions in one event.
    final class LastStamp: Sendable {
        let value = Atomic<UInt64>(0)
    }

    struct Percentiles {
        var p50: Double
        var p99: Double
        var count: Int
        /// Over messages, of each one's earliest receipt among the subscribers (fan-out only).
        var firstP50 = 0.0
        var firstP99 = 0.0
    }

    // MARK: - Formatting

    private static func rate(_ value: Double?) -> String {
        value.map { Int($0).formatted() + "/s" } ?? "?"
    }

    private static func ms(_ value: Double) -> String { String(format: "%.3f", value) }

    private static func cpuSeconds(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "?" }

    private static func microsecondsPer(_ seconds: Double?, _ count: Double) -> String {
        guard let seconds, count > 0 else { return "?" }
        return String(format: "%.1f", seconds / count * 1e6)
    }

    private static func ratio(_ ours: Double, _ theirs: Double?, goal: String) -> String {
        guard let theirs, theirs > 0 else { return "?" }
        return String(format: "%.2f (%@)", ours / theirs, goal)
    }

    private static func loadAverage() -> String {
        ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?")
            .split(separator: " ").prefix(3).joined(separator: " ")
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    static func frame(_ text: String) -> [UInt8] {
        let payload = Array(text.utf8)
        let n = UInt32(payload.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + payload
    }

    private static func printTable(_ columns: [String], _ rows: [[String]]) {
        let widths = columns.indices.map { i in ([columns[i]] + rows.map { $0[i] }).map(\.count).max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: " | ")
        }
        print(line(columns))
        print(widths.map { String(repeating: "-", count: $0) }.joined(separator: "-|-"))
        for row in rows { print(line(row)) }
    }

    struct BenchError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// The processes a benchmark started, stopped by PID (SIGTERM, then SIGKILL after 5 s) when it ends.
final class ProcessGroup: Sendable {
    private let running = Mutex<[pid_t]>([])

    @discardableResult
    func start(_ executable: String, _ arguments: [String], standardOutput: String? = nil) throws -> pid_t {
        let child = try ChildProcess(executable, arguments, standardOutput: standardOutput)
        running.withLock { $0.append(child.pid) }
        return child.pid
    }

    /// Waits for `pid` to exit and returns its status.
    func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        _ = retryingInterrupts { waitpid(pid, &status, 0) }
        running.withLock { $0.removeAll { $0 == pid } }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    func stopAll() {
        let pids = running.withLock { pids in
            defer { pids = [] }
            return pids
        }
        for pid in pids { kill(pid, SIGTERM) }
        for pid in pids {
            var status: Int32 = 0
            let deadline = ContinuousClock.now + .seconds(5)
            while waitpid(pid, &status, WNOHANG) == 0 {
                if ContinuousClock.now > deadline {
                    kill(pid, SIGKILL)
                    _ = waitpid(pid, &status, 0)
                    break
                }
                usleep(10_000)
            }
        }
    }
}

/// A blocking Unix-socket client for the bus's frames and Redis's RESP, one thread per socket.
final class BenchSocket: @unchecked Sendable {
    // @unchecked Sendable: each socket is used by one thread at a time (a benchmark thread, or a writer thread
    // and a reader thread that touch disjoint state: `write` uses no buffers).
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var chunk = [UInt8](repeating: 0, count: 65_536)

    /// The socket, for `poll` (`StoreBusBenchmark.multiplexedRoundTrips`).
    var fileDescriptor: Int32 { descriptor }

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8) + [0]) }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            close(descriptor)
            throw SystemError(errno: code, operation: "connect(\(path))")
        }
    }

    deinit {
        close(descriptor)
    }

    func hello() throws {
        write(
            StoreBusBenchmark.frame(
                #"{"jsonrpc":"2.0","id":0,"method":"bus.hello","params":{"protocol":1,"client":"bench"}}"#))
        guard readFrame() != nil else { throw StoreBusBenchmark.BenchError("bus.hello got no answer") }
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, $0.count - offset, 0) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// One length-prefixed frame's payload.
    func readFrame() -> [UInt8]? {
        guard fill(4) else { return nil }
        let length =
            Int(buffer[start]) << 24 | Int(buffer[start + 1]) << 16 | Int(buffer[start + 2]) << 8
            | Int(buffer[start + 3])
        guard fill(4 + length) else { return nil }
        defer { start += 4 + length }
        return Array(buffer[(start + 4)..<(start + 4 + length)])
    }

    /// One RESP array message (`*N\r\n` then N bulk strings or integers), as its raw bytes.
    func readRESPMessage() -> [UInt8]? {
        guard let header = line() else { return nil }
        guard header.first == UInt8(ascii: "*"), let count = Int(String(decoding: header.dropFirst(), as: UTF8.self))
        else { return header }
        var message = header
        for _ in 0..<count {
            guard let item = line() else { return nil }
            message += item
            if item.first == UInt8(ascii: "$"), let length = Int(String(decoding: item.dropFirst(), as: UTF8.self)),
                length >= 0
            {
                guard fill(length + 2) else { return nil }
                message += buffer[start..<(start + length)]
                start += length + 2
            }
        }
        return message
    }

    private func line() -> [UInt8]? {
        var scanned = 0
        while true {
            if let end = buffer[(start + scanned)...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<max(start, end - 1)])
                start = end + 1
                return line
            }
            scanned = buffer.count - start
            guard readMore() else { return nil }
        }
    }

    private func fill(_ count: Int) -> Bool {
        while buffer.count - start < count {
            guard readMore() else { return false }
        }
        return true
    }

    private func readMore() -> Bool {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 20 {
            buffer.removeFirst(start)
            start = 0
        }
        let got = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
        guard got > 0 else { return false }
        buffer += chunk[0..<got]
        return true
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
