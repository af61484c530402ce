import Testing

@testable import devicesvc

@Suite struct DeviceServiceTests {
    @Test func usageNamesTheSocketFlag() {
        #expect(DeviceServiceCommand.usage.contains("--socket"))
    }
}
