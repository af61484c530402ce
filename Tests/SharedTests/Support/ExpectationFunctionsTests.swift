import TestSupport
import Testing

/// TestSupport's expectation functions (`expectTrue`, `expectNil`, `expectEmpty`, the comparisons): each records
/// nothing when its check holds, and otherwise one issue at the caller's line naming what it saw.
struct ExpectationFunctionsTests {
    private struct Failure: Error {}

    @Test func checksThatHoldRecordNoIssue() {
        expectTrue(1 < 2)
        expectFalse([1].isEmpty)
        expectNil(Int?.none)
        expectNotNil(Int?.some(1))
        expectEmpty([Int]())
        expectNotEqual("a", "b")
        expectLessThan(1, 2)
        expectLessThanOrEqual(2, 2)
        expectGreaterThan(3, 2)
        expectGreaterThanOrEqual(3, 3)
    }

    @Test func aFalseConditionRecordsOneIssueAtTheCallersLineWithTheComment() {
        let line = #line + 2
        withKnownIssue {
            expectTrue(2 < 1, "two before one")
        } matching: { issue in
            issue.sourceLocation?.line == line
                && issue.comments.contains {
                    $0.rawValue == "Expectation failed: the condition is false: two before one"
                }
        }
        withKnownIssue {
            expectFalse(true)
        } matching: { issue in
            issue.comments.contains { $0.rawValue == "Expectation failed: the condition is true" }
        }
    }

    @Test func anErrorThrownByTheConditionIsRecordedNotThrown() {
        func failing() throws -> Bool { throw Failure() }
        func failingValue() throws -> Int? { throw Failure() }
        // The checks are made in functions: a closure holding `try` is inferred to throw, even inside an autoclosure.
        func checkTheFailingCondition() { expectTrue(try failing()) }
        func checkTheFailingValue() { expectNil(try failingValue()) }
        withKnownIssue {
            checkTheFailingCondition()
        } matching: { issue in
            issue.error is Failure
        }
        withKnownIssue {
            checkTheFailingValue()
        } matching: { issue in
            issue.error is Failure
        }
    }

    @Test func failuresNameTheValuesTheySaw() {
        func expectMessage(_ message: String, _ body: () -> Void) {
            withKnownIssue {
                body()
            } matching: { issue in
                issue.comments.contains { $0.rawValue == "Expectation failed: \(message)" }
            }
        }
        expectMessage("7 is not nil") { expectNil(Int?.some(7)) }
        expectMessage("the value is nil") { expectNotNil(Int?.none) }
        expectMessage("[1, 2] is not empty") { expectEmpty([1, 2]) }
        expectMessage("3 is equal to 3") { expectNotEqual(3, 3) }
        expectMessage("2 is not less than 1") { expectLessThan(2, 1) }
        expectMessage("2 is greater than 1") { expectLessThanOrEqual(2, 1) }
        expectMessage("1 is not greater than 2") { expectGreaterThan(1, 2) }
        expectMessage("1 is less than 2") { expectGreaterThanOrEqual(1, 2) }
    }
}
