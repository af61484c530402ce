import TestSupport
import Testing

@testable import ContextBusServer
@testable import ContextBusSupport

struct MetricsExpositionTests {
    @Test func writesEachFamilyAsOneBlockWithTheCommonLabelsFirst() {
        let text = MetricsExposition.text(
            [
                .counter("ctxbus_x_total", help: "Things done.\nSecond line \\ here.", value: 3),
                MetricFamily(
                    name: "ctxbus_y", help: "By kind.", kind: .gauge,
                    samples: [MetricSample(labels: [("kind", "a\"b\\c\nd")], value: 0.25)]),
            ], commonLabels: [MetricLabel(name: "service", value: "storesvc")])
        expectEqual(
            text,
            """
            # HELP ctxbus_x_total Things done.\\nSecond line \\\\ here.
            # TYPE ctxbus_x_total counter
            ctxbus_x_total{service="storesvc"} 3
            # HELP ctxbus_y By kind.
            # TYPE ctxbus_y gauge
            ctxbus_y{service="storesvc",kind="a\\"b\\\\c\\nd"} 0.25

            """)
    }

    @Test func writesHistogramsAsCumulativeBucketsThenSumAndCount() {
        let histogram = LatencyHistogram(bounds: [0.001, 0.01])
        histogram.record(.microseconds(500))
        histogram.record(.milliseconds(5))
        histogram.record(.milliseconds(5))
        histogram.record(.seconds(2))
        let text = MetricsExposition.text([.histogram("ctxbus_commit_seconds", help: "Commits.", histogram.snapshot)])
        expectEqual(
            text,
            """
            # HELP ctxbus_commit_seconds Commits.
            # TYPE ctxbus_commit_seconds histogram
            ctxbus_commit_seconds_bucket{le="0.001"} 1
            ctxbus_commit_seconds_bucket{le="0.01"} 3
            ctxbus_commit_seconds_bucket{le="+Inf"} 4
            ctxbus_commit_seconds_sum{} 2.0105
            ctxbus_commit_seconds_count{} 4

            """.replacingOccurrences(of: "{}", with: ""))
    }

    @Test(arguments: [
        (0.0, "0"), (12.0, "12"), (0.5, "0.5"), (1e-05, "1e-05"), (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"),
        (Double.nan, "NaN"), (1e20, "1e+20"),
    ])
    func writesNumbersAsTheFormatSpellsThem(value: Double, text: String) {
        expectEqual(MetricsExposition.number(value), text)
    }

    @Test func namesFollowPrometheusRules() {
        expectTrue(MetricFamily.isValidName("ctxbus_store_saves_total"))
        expectTrue(MetricFamily.isValidName("a:b_c9"))
        expectFalse(MetricFamily.isValidName("9lives"))
        expectFalse(MetricFamily.isValidName("ctxbus-store"))
        expectFalse(MetricFamily.isValidName(""))
        expectTrue(MetricFamily.isValidLabelName("service"))
        expectFalse(MetricFamily.isValidLabelName("a:b"))
    }

    @Test func aHistogramCountsEachObservationInOneBucket() {
        let histogram = LatencyHistogram()
        for milliseconds in [0, 1, 3, 20, 20_000] { histogram.record(.milliseconds(milliseconds)) }
        let snapshot = histogram.snapshot
        expectEqual(snapshot.count, 5)
        expectEqual(snapshot.cumulativeCounts.first, 1, "0 s is in the first bucket")
        expectEqual(snapshot.cumulativeCounts[snapshot.bounds.firstIndex(of: 0.001)!], 2)
        expectEqual(snapshot.cumulativeCounts[snapshot.bounds.count - 1], 4, "20 s is above the last bound")
        expectEqual(snapshot.sum, 20.024)
    }
}
