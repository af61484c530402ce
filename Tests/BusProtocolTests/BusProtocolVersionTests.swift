import BusProtocol
import Testing

@Suite struct BusProtocolVersionTests {
    @Test func speaksProtocolVersionOne() {
        #expect(BusProtocolVersion.current == 1)
    }
}
