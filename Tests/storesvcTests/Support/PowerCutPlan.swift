@testable import ContextBusSQLite

/// Where one power-cut round cuts, and what the cut loses: chosen from the round's seeded generator.
struct PowerCutPlan: Sendable, CustomStringConvertible {
    /// The disk freezes at this point (`--test-power-cut-freeze`); `nil`: the process is killed at a random moment of
    /// the load instead (`fallbackMilliseconds`).
    var freezePoint: PowerCutFreezePoint?
    /// When the load has run this long without the freeze point being reached, the process is killed anyway.
    var fallbackMilliseconds: Int
    var loss: PowerCut.Loss

    /// How many of each event a round's service makes, roughly (its start, then 1–2 s of load): the freeze point's
    /// count is drawn up to this. Past it, the fallback kills at a random moment.
    static let eventsPerRound: [PowerCutFreezePoint.Event: Int] = [
        .walWrite: 1_500, .walSync: 400, .databaseWrite: 600, .databaseSync: 12, .otherWrite: 300, .otherSync: 12,
        .rename: 4, .directorySync: 8,
    ]

    /// Events weighted by how much of the store's durability they exercise.
    static let eventWeights: [(PowerCutFreezePoint.Event, Int)] = [
        (.walSync, 25), (.walWrite, 20), (.databaseWrite, 15), (.databaseSync, 10), (.otherWrite, 8),
        (.otherSync, 8), (.rename, 7), (.directorySync, 7),
    ]

    static func random(using random: inout some RandomNumberGenerator) -> PowerCutPlan {
        let roll = Int.random(in: 0..<100, using: &random)
        let loss: PowerCut.Loss = roll < 40 ? .everything : roll < 90 ? .anySubset : .nothing
        let fallback = Int.random(in: 300...2_000, using: &random)
        guard Int.random(in: 0..<100, using: &random) >= 15 else {
            return PowerCutPlan(freezePoint: nil, fallbackMilliseconds: fallback, loss: loss)
        }
        var pick = Int.random(in: 0..<eventWeights.reduce(0) { $0 + $1.1 }, using: &random)
        var event = PowerCutFreezePoint.Event.walSync
        for (candidate, weight) in eventWeights {
            if pick < weight {
                event = candidate
                break
            }
            pick -= weight
        }
        let phase: PowerCutFreezePoint.Phase = Bool.random(using: &random) ? .before : .after
        let count = Int.random(in: 1...eventsPerRound[event, default: 10], using: &random)
        return PowerCutPlan(
            freezePoint: PowerCutFreezePoint(phase, event, count: count), fallbackMilliseconds: 4_000, loss: loss)
    }

    /// A plan for a round whose service starts with a model that migrates the file in place (`--model` adding an
    /// optional, indexed attribute with a default, which the migration writes into every existing row, in one
    /// transaction at open): the point is drawn among the first events of the start, where that transaction writes
    /// its pages to the WAL, syncs it at its commit, and a checkpoint copies them.
    static func migration(using random: inout some RandomNumberGenerator) -> PowerCutPlan {
        var plan = Self.random(using: &random)
        let events: [(PowerCutFreezePoint.Event, Int)] = [(.walWrite, 80), (.walSync, 3), (.databaseWrite, 60)]
        let (event, limit) = events[Int.random(in: 0..<events.count, using: &random)]
        let phase: PowerCutFreezePoint.Phase = Bool.random(using: &random) ? .before : .after
        plan.freezePoint = PowerCutFreezePoint(phase, event, count: Int.random(in: 1...limit, using: &random))
        plan.fallbackMilliseconds = 4_000
        return plan
    }

    var description: String {
        "\(freezePoint.map { "freeze at \($0)" } ?? "kill at \(fallbackMilliseconds) ms"), lose \(loss.rawValue)"
    }
}
