import ContextBusObjectGraph
import Foundation

/// One `--retain Entity:dateKey:age` rule: the objects of `entity` whose `dateKey` is older than now − `age` are
/// deleted, as a batch authored `retention` (docs/protocol.md, "Batch changes and retention").
struct RetentionRule: Sendable, Hashable, CustomStringConvertible {
    var entity: String
    var dateKey: String
    /// The age in seconds.
    var age: Int64

    /// Reads `Entity:dateKey:age`, the age a number followed by `d`, `h`, `m` or `s` (`30d`, `12h`, `90m`).
    ///
    /// - Returns: `nil` when `text` is not of that shape.
    init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, let age = Self.seconds(parts[2]) else {
            return nil
        }
        self.init(entity: parts[0], dateKey: parts[1], age: age)
    }

    init(entity: String, dateKey: String, age: Int64) {
        self.entity = entity
        self.dateKey = dateKey
        self.age = age
    }

    /// `30d` → 2,592,000; `nil` for anything but a positive number and one unit.
    private static func seconds(_ text: String) -> Int64? {
        guard let unit = text.last, let number = Int64(text.dropLast()), number > 0 else { return nil }
        let scale: Int64
        switch unit {
        case "d": scale = 86_400
        case "h": scale = 3_600
        case "m": scale = 60
        case "s": scale = 1
        default: return nil
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: scale)
        return overflow ? nil : seconds
    }

    /// Why `model` cannot serve this rule, or `nil` when it can: the entity must exist and `dateKey` be one of its
    /// date attributes.
    func problem(in model: Model) -> String? {
        guard let entity = model.entity(named: entity) else {
            return "--retain \(self): the model has no entity '\(self.entity)'"
        }
        guard let attribute = entity.attribute(named: dateKey), attribute.type == .date else {
            return "--retain \(self): '\(dateKey)' is not a date attribute of \(entity.name)"
        }
        return nil
    }

    /// The batch this rule runs at `now`.
    func batch(at now: Date) -> BatchRequest {
        BatchRequest(
            entity: entity, where: try? ObjectPredicate(format: "\(dateKey) < $cutoff"),
            arguments: ["cutoff": .date(now.addingTimeInterval(-Double(age)))], action: .delete, author: "retention")
    }

    var description: String { "\(entity):\(dateKey):\(Self.ageText(age))" }

    private static func ageText(_ seconds: Int64) -> String {
        for (unit, scale) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60)] where seconds % scale == 0 {
            return "\(seconds / scale)\(unit)"
        }
        return "\(seconds)s"
    }
}
