import BusProtocol
import TestSupport
import Testing

@Suite struct BusProtocolVersionTests {
    @Test func speaksProtocolVersionOne() {
        expectEqual(BusProtocolVersion.current, 1)
    }
}
