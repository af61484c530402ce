import TestSupport
import Testing

@testable import ContextBusWire

struct BluetoothIdentifiersTests {
    @Test func readsAddressesCaseInsensitivelyAndKeepsThemUppercase() {
        expectEqual(BluetoothAddress("aa:bb:cc:dd:ee:0f")?.string, "AA:BB:CC:DD:EE:0F")
        expectEqual(BluetoothAddress("AA:BB:CC:DD:EE:FF"), BluetoothAddress("aa:bb:cc:dd:ee:ff"))
    }

    @Test(arguments: [
        "", "AA:BB:CC:DD:EE", "AA:BB:CC:DD:EE:FF:00", "AA-BB-CC-DD-EE-FF", "GG:BB:CC:DD:EE:FF", "AABBCCDDEEFF0000A",
    ])
    func rejectsMalformedAddresses(text: String) {
        expectNil(BluetoothAddress(text))
    }

    @Test func expandsShortUUIDsWithTheBluetoothBaseUUID() {
        let short = BluetoothUUID("2A19")
        expectEqual(short?.string, "2A19")
        expectEqual(short?.canonical, "00002a19-0000-1000-8000-00805f9b34fb")
        expectEqual(short?.matches(BluetoothUUID("00002A19-0000-1000-8000-00805F9B34FB")!), true)
        expectEqual(short?.matches(BluetoothUUID("2a1a")!), false)
    }

    @Test(arguments: [
        "", "2a1", "2a19f", "zz19", "00002a19-0000-1000-8000-00805f9b34f", "00002a19+0000-1000-8000-00805f9b34fb",
        "0x2a19",
    ])
    func rejectsMalformedUUIDs(text: String) {
        expectNil(BluetoothUUID(text))
    }
}
