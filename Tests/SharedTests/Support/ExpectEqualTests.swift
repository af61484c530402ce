import TestSupport
import Testing

struct ExpectEqualTests {
    @Test func equalValuesRecordNoIssue() {
        expectEqual([1, 2, 3], [1, 2, 3])
        expectEqual("reading" as String?, "reading")
    }

    @Test func unequalValuesRecordOneIssueNamingBothValues() {
        withKnownIssue {
            expectEqual(3, 4)
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("3 is not equal to 4") }
        }
    }

    @Test func theIssueCarriesTheCommentAndTheCallersLine() {
        let line = #line + 2
        withKnownIssue {
            expectEqual("Device/1", "Device/2", "wrong object")
        } matching: { issue in
            issue.sourceLocation?.line == line
                && issue.comments.contains { $0.rawValue.hasSuffix(": wrong object") }
        }
    }

    @Test func theMessageWritesActualThenExpected() {
        expectEqual(
            unequalMessage(Optional(7), nil, comment: nil),
            "Expectation failed: Optional(7) is not equal to nil (actual, expected)"
        )
    }
}
