import Foundation

/// How much work the randomised tests do. `CONTEXTBUS_TEST_SCALE` (a positive whole number, default 1)
/// multiplies their rounds for a deeper run than `scripts/test` makes, e.g.
/// `CONTEXTBUS_TEST_SCALE=10 swift test --filter LiveQueryRandomisedTests`.
enum TestScale {
    static let factor: Int = {
        guard let text = ProcessInfo.processInfo.environment["CONTEXTBUS_TEST_SCALE"], let value = Int(text), value > 0
        else { return 1 }
        return value
    }()
}
