import Foundation
import TestSupport
import Testing

@testable import ContextBusServer
@testable import ContextBusWire
@testable import devicesvc

struct DeviceServiceConfigurationTests {
    func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> DeviceServiceConfiguration {
        guard
            case .run(let configuration) = try DeviceServiceConfiguration.parse(
                arguments: arguments, environment: environment)
        else { throw ConfigurationError.unexpectedArgument("help") }
        return configuration
    }

    @Test func defaultsFollowTheProtocolsRuntimeDirectory() throws {
        let fromRuntime = try parse([], environment: ["CTXBUS_RUNTIME_DIR": "/r", "XDG_RUNTIME_DIR": "/x"])
        expectEqual(fromRuntime.socketPath, "/r/device.sock")
        expectEqual(fromRuntime.storeSocketPath, "/r/store.sock")
        try expectEqual(parse([], environment: ["XDG_RUNTIME_DIR": "/x"]).socketPath, "/x/ctxbus/device.sock")
        let bare = try parse([])
        expectEqual(bare.socketPath, "./run/device.sock")
        expectEqual(bare.chains.adapter, "hci0")
        expectEqual(bare.chains.maxConcurrent, 4)
        expectEqual(bare.chains.serialization, .device)
        expectEqual(bare.chains.concurrentConnects, 1)
        expectEqual(bare.busAddress, "unix:path=/run/dbus/system_bus_socket")
    }

    @Test func readsEveryFlag() throws {
        let configuration = try parse(
            [
                "--socket", "/s", "--store=/t", "--adapter", "hci1", "--max-concurrent", "8", "--serialize", "global",
                "--retry", "0", "--retry-delay-ms", "20", "--step-timeout-ms", "500", "--chain-timeout-ms", "900",
                "--resolve-timeout-ms", "300", "--log-level", "debug", "--bus", "unix:path=/b",
                "--concurrent-connects", "3",
            ], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/ignored"])
        expectEqual(configuration.socketPath, "/s")
        expectEqual(configuration.storeSocketPath, "/t")
        expectEqual(configuration.busAddress, "unix:path=/b")
        expectEqual(configuration.chains.adapter, "hci1")
        expectEqual(configuration.chains.maxConcurrent, 8)
        expectEqual(configuration.chains.serialization, .global)
        expectEqual(configuration.chains.concurrentConnects, 3)
        expectEqual(configuration.chains.retry, RetryPolicy(retries: 0, initialDelay: .milliseconds(20)))
        expectEqual(configuration.chains.stepTimeout, .milliseconds(500))
        expectEqual(configuration.chains.chainTimeout, .milliseconds(900))
        expectEqual(configuration.chains.resolveTimeout, .milliseconds(300))
        expectEqual(configuration.logLevel, .debug)
    }

    @Test func readsWatchesAndDecodeFormats() throws {
        let configuration = try parse([
            "--watch", "aa:bb:cc:dd:ee:01=2a19,c0defeed-0002-4000-8000-000000000000", "--watch",
            "AA:BB:CC:DD:EE:02=2a6e", "--decode", "c0defeed-0002-4000-8000-000000000000=uint16*0.1:V",
        ])
        expectEqual(
            configuration.watches,
            [
                .init(
                    address: BluetoothAddress("AA:BB:CC:DD:EE:01")!,
                    characteristics: [
                        BluetoothUUID("2a19")!, BluetoothUUID("c0defeed-0002-4000-8000-000000000000")!,
                    ]),
                .init(address: BluetoothAddress("AA:BB:CC:DD:EE:02")!, characteristics: [BluetoothUUID("2a6e")!]),
            ])
        expectEqual(
            configuration.decoders.decode(Data([100, 0]), of: BluetoothUUID("c0defeed-0002-4000-8000-000000000000")!),
            Quantity(number: 10, unit: "V"))
        expectEqual(
            configuration.decoders.decode(Data([87]), of: BluetoothUUID("2a19")!), Quantity(number: 87, unit: "%"))
    }

    @Test func theSystemBusComesFromTheEnvironment() throws {
        expectEqual(
            try parse([], environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/sim"]).busAddress, "unix:path=/sim")
    }

    @Test func helpWinsOverEverything() throws {
        expectEqual(
            try DeviceServiceConfiguration.parse(arguments: ["--adapter", "hci0", "-h"], environment: [:]), .help)
    }

    @Test(arguments: [
        (
            ["--max-concurrent", "0"],
            ConfigurationError.invalidValue(flag: "--max-concurrent", value: "0", expected: "an integer from 1 to 1024")
        ),
        (
            ["--concurrent-connects", "0"],
            .invalidValue(flag: "--concurrent-connects", value: "0", expected: "an integer from 1 to 64")
        ),
        (
            ["--serialize", "adapter"],
            .invalidValue(flag: "--serialize", value: "adapter", expected: "device or global")
        ),
        (
            ["--adapter", "../hci0"],
            .invalidValue(flag: "--adapter", value: "../hci0", expected: "an adapter name such as hci0")
        ),
        (["--retry"], .missingValue(flag: "--retry")),
        (
            ["--watch", "AA:BB:CC:DD:EE=2a19"],
            .invalidValue(
                flag: "--watch", value: "AA:BB:CC:DD:EE=2a19",
                expected: "a Bluetooth address like AA:BB:CC:DD:EE:01 before '=', not 'AA:BB:CC:DD:EE'")
        ),
        (
            ["--watch", "AA:BB:CC:DD:EE:01=2a19,"],
            .invalidValue(
                flag: "--watch", value: "AA:BB:CC:DD:EE:01=2a19,",
                expected: "16-bit (2a19) or 128-bit characteristic UUIDs after '=', not ''")
        ),
        (
            ["--decode", "2a19=int8"],
            .invalidValue(
                flag: "--decode", value: "2a19=int8",
                expected:
                    "'int8' is not a format: uint8, sint8, uint16, sint16, uint24, sint24, uint32, sint32 or float32")
        ),
        (["--frobnicate"], .unknownFlag("--frobnicate")),
        (["hci0"], .unexpectedArgument("hci0")),
    ])
    func rejectsBadCommandLines(_ arguments: [String], _ expected: ConfigurationError) {
        #expect(throws: expected) { try DeviceServiceConfiguration.parse(arguments: arguments, environment: [:]) }
    }
}
