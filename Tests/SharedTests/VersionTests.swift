import TestSupport
import Testing

@testable import ContextBusSupport

struct VersionTests {
    @Test func versionIsSemantic() {
        expectEqual(ContextBusVersion.string.split(separator: ".").count, 3)
    }
}
