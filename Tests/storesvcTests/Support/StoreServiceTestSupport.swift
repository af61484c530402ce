import Dispatch
import Foundation
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusServer
@testable import ContextBusSupport
@testable import ContextBusTransport
@testable import ContextBusWire
@testable import storesvc

/// Parses JSON text written in a test.
func json(_ text: String) -> JSONValue {
    try! JSONParser().parse(text)
}

/// A fresh unique temporary directory, removed by the caller.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("ctxbus-storesvc-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A SQLite store in a temporary directory, closed and removed when released.
final class TemporarySQLiteStore: Sendable {
    let store: SQLiteStore
    let directory: URL

    init(model: Model = .deviceReadings, historyRetention: Int = 100_000) throws {
        directory = try makeTemporaryDirectory()
        store = try SQLiteStore(
            url: directory.appendingPathComponent("store.sqlite"), model: model,
            configuration: .init(historyRetention: historyRetention))
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A subscriber connection that records what it is sent.
///
/// `isPaced` holds every `sendWhenWritable` until `releasePacedSends()`; `refusesSends` makes
/// every send fail, as a connection dropped for overflow does.
final class RecordingConnection: SubscriberConnection {
    let connectionID: UInt64
    var busConnection: BusConnection? { nil }
    private let state = Locked(State())

    private struct State {
        var events: [RPCEvent] = []
        var isClosed = false
        var closeReason: String?
        var refusesSends = false
        var isPaced = false
        var heldSends: [(RPCEvent, @Sendable (Bool) -> Void)] = []
    }

    init(id: UInt64 = 1, isPaced: Bool = false) {
        connectionID = id
        state.withLock { $0.isPaced = isPaced }
    }

    func send(_ event: RPCEvent) -> Bool {
        state.withLock { state in
            guard !state.isClosed, !state.refusesSends else { return false }
            state.events.append(event)
            return true
        }
    }

    func send(encodedEvent frame: [UInt8]) -> Bool {
        let payload = frame.dropFirst(Frame.headerLength)
        guard case .object(let members)? = try? JSONParser().parse(payload),
            case .string(let method)? = members["method"], let params = members["params"]
        else {
            Issue.record("not an event frame: \(String(decoding: payload, as: UTF8.self))")
            return false
        }
        return send(RPCEvent(method: method, params: params))
    }

    func sendWhenWritable(_ event: RPCEvent, completion: @escaping @Sendable (Bool) -> Void) {
        let held = state.withLock { state -> Bool in
            guard state.isPaced else { return false }
            state.heldSends.append((event, completion))
            return true
        }
        if held { return }
        let sent = send(event)
        DispatchQueue.global().async { completion(sent) }
    }

    func close(because reason: String) {
        state.withLock {
            $0.isClosed = true
            $0.closeReason = reason
        }
    }

    /// Makes every later send fail.
    func refuseSends() {
        state.withLock { $0.refusesSends = true }
    }

    /// Stops holding paced sends and sends the held ones.
    func releasePacedSends() {
        let held = state.withLock { state in
            state.isPaced = false
            defer { state.heldSends = [] }
            return state.heldSends
        }
        for (event, completion) in held {
            let sent = send(event)
            DispatchQueue.global().async { completion(sent) }
        }
    }

    /// The number of paced sends being held.
    var heldSendCount: Int { state.withLock { $0.heldSends.count } }

    var closeReason: String? { state.withLock { $0.closeReason } }

    /// The `store.changed` events received so far.
    var changedEvents: [ChangedEvent] {
        state.withLock { $0.events }.compactMap { try? $0.payload(as: ChangedEvent.self) }
    }

    /// Waits (up to a generous bound that only limits a failing test) until `condition` holds.
    @discardableResult
    func wait(until condition: (RecordingConnection) -> Bool) -> Bool {
        eventually { condition(self) }
    }
}

/// Waits (up to a generous bound) until `condition` holds; for state reached on other queues.
@discardableResult
func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        Thread.sleep(forTimeInterval: 0.005)
    }
    return true
}

extension PersistentStore {
    /// Saves one `Device` with `address` and returns its ID.
    @discardableResult
    func insertDevice(_ address: String, name: String? = nil, author: String? = nil) throws -> ObjectID {
        let temporary = ObjectID(entity: "Device", temporaryReference: "d")
        let result = try save(
            SaveRequest(
                inserts: [
                    .init(
                        id: temporary,
                        values: ["address": .string(address), "name": name.map(PropertyValue.string) ?? .null])
                ], author: author))
        return result.ids[temporary]!
    }
}
