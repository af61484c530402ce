import ContextBusClient
import ContextBusSupport
import Dispatch

/// `store.save` with raw JSON params and result, so that the bridge can send its saves in stream order without
/// waiting for each answer (`BusClient.request` sends on the calling thread; storesvc applies one connection's
/// saves in arrival order and commits those that wait together).
enum RawStoreSave: RPCMethod {
    typealias Params = RawJSON
    typealias Result = RawJSON
    static let name = "store.save"
}

/// Any JSON, as it is.
struct RawJSON: JSONConvertible {
    var json: JSONValue
    init(json: JSONValue) { self.json = json }
}

/// Saves sent and not yet answered, in stream order (at most `Inbound.window`).
///
/// Why this keeps every transaction applied once: storesvc applies a connection's saves in order, so when the
/// connection breaks (storesvc killed, restarted) the saves that committed are a prefix of those sent; the bridge
/// sends every unanswered one again, in order, and the store ignores those whose `txn` it already recorded.
final class PendingApplies {
    struct Entry {
        var message: FleetMessage
        var params: JSONValue
        var position: Int64
        /// Fleet-wide IDs its inserts introduce (a later message naming one waits until this one is answered).
        var inserted: Set<String>
    }

    private(set) var entries: [Entry] = []
    private var outcomes: [Locked<Result<JSONValue, RPCError>?>] = []
    private let answered = DispatchGroup()

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// Whether a message naming `fleetIDs` must wait for the saves in flight.
    func introducesAny(of fleetIDs: Set<String>) -> Bool {
        entries.contains { !$0.inserted.isDisjoint(with: fleetIDs) }
    }

    func send(_ entry: Entry, on client: BusClient) {
        let outcome = Locked<Result<JSONValue, RPCError>?>(nil)
        entries.append(entry)
        outcomes.append(outcome)
        answered.enter()
        let group = answered
        _ = client.request(RawStoreSave.self, RawJSON(json: entry.params)).start { event in
            switch event {
            case .value(let result): outcome.withLock { $0 = .success(result.json) }
            case .failed(let error): outcome.withLock { $0 = .failure(error) }
            case .completed: return
            case .interrupted: outcome.withLock { $0 = .failure(.unavailable("interrupted")) }
            }
            group.leave()
        }
    }

    /// Hands back the entries answered so far from the front (in order, without waiting); stops at the first
    /// unanswered one.
    func takeAnswered() -> [(Entry, Result<JSONValue, RPCError>)] {
        var taken: [(Entry, Result<JSONValue, RPCError>)] = []
        while let first = outcomes.first, let outcome = first.withLock({ $0 }) {
            taken.append((entries.removeFirst(), outcome))
            outcomes.removeFirst()
        }
        return taken
    }

    /// Waits for every answer and hands back the entries with their outcomes, in order.
    func takeAll() -> [(Entry, Result<JSONValue, RPCError>)] {
        answered.wait()
        // Every `leave` happened after its outcome was set: all are there.
        defer {
            entries = []
            outcomes = []
        }
        return zip(entries, outcomes).map { ($0, $1.withLock { $0! }) }
    }
}

@available(*, unavailable)
extension PendingApplies: Sendable {}
