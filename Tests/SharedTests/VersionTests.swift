import Shared
import TestSupport
import Testing

struct VersionTests {
    @Test func versionIsSemantic() {
        expectEqual(ContextBusVersion.string.split(separator: ".").count, 3)
    }
}
