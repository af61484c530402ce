import TestSupport
import Testing

@testable import ContextBusWire

struct BusProtocolVersionTests {
    @Test func speaksProtocolVersionOne() {
        expectEqual(BusProtocolVersion.current, 1)
    }
}
