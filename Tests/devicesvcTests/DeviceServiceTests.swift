import TestSupport
import Testing

@testable import devicesvc

struct DeviceServiceTests {
    @Test func usageNamesTheSocketFlag() {
        expectTrue(DeviceServiceCommand.usage.contains("--socket"))
    }
}

struct DeviceServiceUsageTests {
    @Test(arguments: [
        "--socket", "--store", "--bus", "--adapter", "--max-concurrent", "--serialize", "--concurrent-connects",
        "--retry", "--retry-delay-ms",
        "--step-timeout-ms", "--chain-timeout-ms", "--resolve-timeout-ms", "--log-level", "--help", "--watch",
        "--decode",
    ])
    func usageDocumentsEveryFlag(_ flag: String) {
        expectTrue(DeviceServiceCommand.usage.contains(flag))
    }
}
