import Foundation

/// Metric families as Prometheus' text exposition format, version 0.0.4: what node_exporter's textfile collector
/// reads and what `bus.metrics` answers.
///
/// ```
/// # HELP ctxbus_store_saves_total store.save requests answered, failed ones included.
/// # TYPE ctxbus_store_saves_total counter
/// ctxbus_store_saves_total{service="storesvc"} 180
/// # HELP ctxbus_store_commit_seconds …
/// # TYPE ctxbus_store_commit_seconds histogram
/// ctxbus_store_commit_seconds_bucket{service="storesvc",le="0.0001"} 0
/// …
/// ctxbus_store_commit_seconds_bucket{service="storesvc",le="+Inf"} 120
/// ctxbus_store_commit_seconds_sum{service="storesvc"} 0.532
/// ctxbus_store_commit_seconds_count{service="storesvc"} 120
/// ```
///
/// Each family is one block: `# HELP`, `# TYPE`, then its samples; histogram buckets are cumulative, end with
/// `le="+Inf"` and are followed by `_sum` and `_count`. Help text escapes `\` and newlines; label values escape
/// `\`, `"` and newlines. Numbers are written as integers when they are whole (below 2^53), else in Swift's
/// shortest round-tripping form; `+Inf`, `-Inf` and `NaN` as the format spells them.
package enum MetricsExposition {
    /// The `Content-Type` of this format, for anyone serving it over HTTP.
    package static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The exposition of `families`, each sample labelled with `commonLabels` first.
    package static func text(_ families: [MetricFamily], commonLabels: [MetricLabel] = []) -> String {
        var output = ""
        for family in families {
            output += "# HELP \(family.name) \(escapeHelp(family.help))\n"
            output += "# TYPE \(family.name) \(family.kind.rawValue)\n"
            for sample in family.samples {
                let labels = commonLabels + sample.labels
                switch sample.value {
                case .number(let value):
                    output += "\(family.name)\(labelText(labels)) \(number(value))\n"
                case .histogram(let snapshot):
                    for (index, bound) in snapshot.bounds.enumerated() {
                        let le = labels + [MetricLabel(name: "le", value: number(bound))]
                        output += "\(family.name)_bucket\(labelText(le)) \(snapshot.cumulativeCounts[index])\n"
                    }
                    let infinity = labels + [MetricLabel(name: "le", value: "+Inf")]
                    output += "\(family.name)_bucket\(labelText(infinity)) \(snapshot.count)\n"
                    output += "\(family.name)_sum\(labelText(labels)) \(number(snapshot.sum))\n"
                    output += "\(family.name)_count\(labelText(labels)) \(snapshot.count)\n"
                }
            }
        }
        return output
    }

    /// A sample value or bucket bound as the format writes it.
    package static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 9_007_199_254_740_992 { return String(Int64(value)) }
        return "\(value)"
    }

    private static func labelText(_ labels: [MetricLabel]) -> String {
        guard !labels.isEmpty else { return "" }
        return "{" + labels.map { "\($0.name)=\"\(escapeLabelValue($0.value))\"" }.joined(separator: ",") + "}"
    }

    private static func escapeHelp(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func escapeLabelValue(_ text: String) -> String {
        escapeHelp(text).replacingOccurrences(of: "\"", with: "\\\"")
    }
}
