import ContextBusSupport

/// One metric of a service's exposition: its name, help, type and samples (Prometheus' "metric family").
///
/// Names follow Prometheus' rules: `ctxbus_` then the subsystem (`store_`, `device_`), base units (`_seconds`,
/// `_bytes`), `_total` for counters; standard process metrics keep their usual `process_` names. Every sample is
/// rendered with the service's `service` label (`MetricsExposition`), so the families of storesvc and devicesvc
/// can be merged into one exposition (`ctxbus metrics`) or read side by side by node_exporter.
///
/// ```swift
/// MetricFamily.counter("ctxbus_store_saves_total", help: "store.save requests answered.", value: 180)
/// MetricFamily(name: "ctxbus_device_chains_total", help: "Chains ended, by outcome.", kind: .counter,
///              samples: [.init(labels: [("outcome", "succeeded")], value: 9)])
/// ```
package struct MetricFamily: Sendable, Hashable {
    /// The type line's type.
    package enum Kind: String, Sendable, Hashable {
        case counter, gauge, histogram
    }

    package var name: String
    package var help: String
    package var kind: Kind
    package var samples: [MetricSample]

    package init(name: String, help: String, kind: Kind, samples: [MetricSample]) {
        precondition(Self.isValidName(name), "'\(name)' is not a Prometheus metric name")
        precondition(kind != .counter || name.hasSuffix("_total"), "counter '\(name)' must end in _total")
        self.name = name
        self.help = help
        self.kind = kind
        self.samples = samples
    }

    /// A counter with one unlabelled sample.
    package static func counter(_ name: String, help: String, value: Int64) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .counter, samples: [MetricSample(value: Double(value))])
    }

    /// A gauge with one unlabelled sample.
    package static func gauge(_ name: String, help: String, value: Double) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .gauge, samples: [MetricSample(value: value)])
    }

    /// A histogram with one unlabelled series.
    package static func histogram(
        _ name: String, help: String, _ snapshot: LatencyHistogram.Snapshot
    ) -> MetricFamily {
        MetricFamily(name: name, help: help, kind: .histogram, samples: [MetricSample(histogram: snapshot)])
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`, the metric name syntax of the exposition format.
    package static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isNameStart(first) else { return false }
        return name.utf8.allSatisfy { isNameStart($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, the label name syntax.
    package static func isValidLabelName(_ name: String) -> Bool {
        guard let first = name.utf8.first, isNameStart(first), first != UInt8(ascii: ":") else { return false }
        return name.utf8.allSatisfy {
            ($0 != UInt8(ascii: ":") && isNameStart($0)) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
        }
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
    }
}

/// One sample of a family: its labels and its value, a number or a histogram's buckets.
package struct MetricSample: Sendable, Hashable {
    package enum Value: Sendable, Hashable {
        case number(Double)
        case histogram(LatencyHistogram.Snapshot)
    }

    /// Label names and values, in order (the `service` label is added when rendered).
    package var labels: [MetricLabel]
    package var value: Value

    package init(labels: [(String, String)] = [], value: Double) {
        self.labels = labels.map { MetricLabel(name: $0.0, value: $0.1) }
        self.value = .number(value)
    }

    package init(labels: [(String, String)] = [], histogram: LatencyHistogram.Snapshot) {
        self.labels = labels.map { MetricLabel(name: $0.0, value: $0.1) }
        self.value = .histogram(histogram)
    }
}

/// A label of a sample: `service="storesvc"`.
package struct MetricLabel: Sendable, Hashable {
    package var name: String
    package var value: String

    package init(name: String, value: String) {
        precondition(MetricFamily.isValidLabelName(name) && !name.hasPrefix("__"), "'\(name)' is not a label name")
        self.name = name
        self.value = value
    }
}
