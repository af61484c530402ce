import Shared
import Testing

@Suite struct VersionTests {
    @Test func versionIsSemantic() {
        #expect(ContextBusVersion.string.split(separator: ".").count == 3)
    }
}
