import ContextBusObjectGraph
import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// Runs the `--retain` rules: at start, then every interval, each rule as one batch delete authored `retention`,
/// one rule after the other; and keeps what `store.stats` reports of them.
final class RetentionSweeper: Sendable {
    /// What one rule has done since the service started.
    struct RuleStatistics: Sendable, Hashable {
        var runs: Int64 = 0
        var deleted: Int64 = 0
        var lastRun: Date?
        var lastDeleted: Int64 = 0
        var lastDurationSeconds: Double = 0
        var lastError: String?
    }

    let rules: [RetentionRule]
    let interval: Duration
    private let store: any PersistentStore
    private let log: ServiceLog
    private let queue = DispatchQueue(label: "storesvc.retention")
    private let state = Locked(State())

    private struct State {
        var statistics: [RuleStatistics] = []
        var timer: DispatchSourceBox?
        var isStopped = false
    }

    init(rules: [RetentionRule], interval: Duration, store: any PersistentStore, log: ServiceLog) {
        self.rules = rules
        self.interval = interval
        self.store = store
        self.log = log
        state.withLock { $0.statistics = Array(repeating: RuleStatistics(), count: rules.count) }
    }

    /// Runs every rule now, then every `interval`; nothing when there are no rules.
    func start() {
        guard !rules.isEmpty else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let nanoseconds = interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000
        timer.schedule(deadline: .now(), repeating: .nanoseconds(Int(nanoseconds)))
        timer.setEventHandler { [weak self] in self?.sweep() }
        state.withLock { $0.timer = DispatchSourceBox(timer) }
        timer.resume()
    }

    /// Stops the timer and waits for a sweep under way to end.
    func stop() {
        let timer = state.withLock { state -> DispatchSourceBox? in
            state.isStopped = true
            return state.timer
        }
        timer?.source.cancel()
        queue.sync {}
    }

    /// Each rule's statistics, in rule order.
    var statistics: [RuleStatistics] { state.withLock { $0.statistics } }

    /// `store.stats`' `retention` member: one object per rule.
    var statisticsJSON: JSONValue {
        .array(
            zip(rules, statistics).map { rule, statistics in
                .object([
                    "rule": .string(rule.description), "runs": .int(statistics.runs),
                    "deleted": .int(statistics.deleted),
                    "lastRun": statistics.lastRun.map { .string($0.rfc3339String) } ?? .null,
                    "lastDeleted": .int(statistics.lastDeleted),
                    "lastDurationSeconds": .double(statistics.lastDurationSeconds),
                    "lastError": statistics.lastError.map(JSONValue.string) ?? .null,
                ])
            })
    }

    /// One pass over the rules, on `queue`.
    private func sweep() {
        for (index, rule) in rules.enumerated() {
            if state.withLock({ $0.isStopped }) { return }
            let started = ContinuousClock.now
            let now = Date()
            let outcome = Result { try store.batch(rule.batch(at: now)) }
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            state.withLock { state in
                state.statistics[index].runs += 1
                state.statistics[index].lastRun = now
                state.statistics[index].lastDurationSeconds = seconds
                switch outcome {
                case .success(let result):
                    state.statistics[index].deleted += Int64(result.count)
                    state.statistics[index].lastDeleted = Int64(result.count)
                    state.statistics[index].lastError = nil
                case .failure(let error):
                    state.statistics[index].lastDeleted = 0
                    state.statistics[index].lastError = "\(error)"
                }
            }
            switch outcome {
            case .success(let result) where result.count > 0:
                log.info("retention \(rule): deleted \(result.count) in txn \(result.txn.map(String.init) ?? "-")")
            case .success:
                break
            case .failure(let error):
                log.error("retention \(rule): \(error)")
            }
        }
    }
}
