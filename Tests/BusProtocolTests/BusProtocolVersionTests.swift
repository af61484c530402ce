import BusProtocol
import TestSupport
import Testing

struct BusProtocolVersionTests {
    @Test func speaksProtocolVersionOne() {
        expectEqual(BusProtocolVersion.current, 1)
    }
}
