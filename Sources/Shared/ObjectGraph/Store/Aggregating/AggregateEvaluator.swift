import Foundation

/// Computes a checked aggregate in memory over the snapshots of the matching objects: the reference every store
/// agrees with (the SQLite store computes the same in SQL).
package struct AggregateEvaluator {
    package let aggregate: CheckedAggregate

    package init(_ aggregate: CheckedAggregate) {
        self.aggregate = aggregate
    }

    /// The groups of `snapshots`, ordered; without `groupBy` and `bucket`, exactly one group (with `count` 0 and
    /// `null` for the other values when there is no snapshot).
    package func groups(of snapshots: [ObjectSnapshot]) -> [AggregateResult.Group] {
        let keys = aggregate.request.groupKeys
        var members: [[PropertyValue]: [ObjectSnapshot]] = [:]
        for snapshot in snapshots { members[key(of: snapshot), default: []].append(snapshot) }
        if keys.isEmpty && members.isEmpty { members[[]] = [] }
        let ordered = members.keys.sorted { lhs, rhs in
            for (a, b) in zip(lhs, rhs) {
                let order = PropertyValue.storageOrder(a, b)
                if order != 0 { return order < 0 }
            }
            return false
        }
        return ordered.map { key in
            var keyValues: [String: PropertyValue] = [:]
            for (name, value) in zip(keys, key) { keyValues[name] = value }
            var values: [String: PropertyValue] = [:]
            for (name, function) in aggregate.values { values[name] = compute(function, over: members[key] ?? []) }
            return AggregateResult.Group(key: keyValues, values: values)
        }
    }

    private func key(of snapshot: ObjectSnapshot) -> [PropertyValue] {
        var key = aggregate.request.groupBy.map { snapshot.values[$0] ?? .null }
        if let bucket = aggregate.request.bucket {
            if case .date(let date)? = snapshot.values[bucket.key] {
                key.append(.date(CheckedAggregate.windowStart(of: date, seconds: bucket.seconds)))
            } else {
                key.append(.null)
            }
        }
        return key
    }

    private func compute(_ function: AggregateRequest.Function, over snapshots: [ObjectSnapshot]) -> PropertyValue {
        guard let key = function.key else { return .int(Int64(snapshots.count)) }
        let present = snapshots.compactMap { snapshot -> PropertyValue? in
            guard let value = snapshot.values[key], !value.isNull else { return nil }
            return value
        }
        switch function {
        case .count:
            return .int(Int64(snapshots.count))
        case .countOf:
            return .int(Int64(present.count))
        case .sum:
            guard !present.isEmpty else { return .null }
            let total = present.reduce(0.0) { $0 + (Self.number($1) ?? 0) }
            switch aggregate.type(of: key) {
            case .int?: return .int(present.reduce(Int64(0)) { $0 &+ ($1.intValue ?? 0) })
            // `sum` keeps the attribute's type: a date's seconds since the Unix epoch, added, as a date.
            case .date?: return .date(Date(timeIntervalSince1970: total))
            default: return .double(total)
            }
        case .average:
            guard !present.isEmpty else { return .null }
            return .double(present.reduce(0.0) { $0 + (Self.number($1) ?? 0) } / Double(present.count))
        case .minimum:
            return present.min { PropertyValue.storageOrder($0, $1) < 0 } ?? .null
        case .maximum:
            return present.max { PropertyValue.storageOrder($0, $1) < 0 } ?? .null
        }
    }

    /// A summed or averaged value as a number: a date as its seconds since the Unix epoch (as SQLite stores it).
    private static func number(_ value: PropertyValue) -> Double? {
        switch value {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .date(let d): return d.timeIntervalSince1970
        default: return nil
        }
    }
}
