import Foundation
import TestSupport
import Testing

@testable import ContextBusDBus
@testable import ContextBusWire
@testable import devicesvc

/// The pure parts of watches and discovery: backoff, merged discovery filters, advertised data.
struct DevicePushUnitTests {
    // MARK: - ReconnectBackoff

    @Test func theBackoffDoublesFromMinToMaxWithAtMostTwentyPercentJitter() {
        let backoff = ReconnectBackoff(policy: ReconnectPolicy(minMs: 500, maxMs: 30_000))
        let middle = (1...9).map { backoff.delay(beforeAttempt: $0, unit: 0.5) / .milliseconds(1) }
        expectEqual(middle, [500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000])
        for attempt in 1...60 {
            let base = min(500 * pow(2, Double(min(attempt - 1, 40))), 30_000)
            let low = backoff.delay(beforeAttempt: attempt, unit: 0) / .milliseconds(1)
            let high = backoff.delay(beforeAttempt: attempt, unit: 0.999_999) / .milliseconds(1)
            expectTrue(abs(low - base * 0.8) < 0.01, "attempt \(attempt): \(low)")
            expectTrue(high <= 30_000 && high >= min(base * 1.2, 30_000) - 0.01, "attempt \(attempt): \(high)")
        }
        expectEqual(
            ReconnectBackoff(policy: ReconnectPolicy(minMs: 1, maxMs: 1)).delay(beforeAttempt: 1, unit: 0),
            .milliseconds(1))
    }

    // MARK: - DiscoveryFilter

    @Test func mergedDiscoveryFiltersLetThroughWhatAnySessionWants() {
        let heartRate = DiscoveryFilter(uuids: ["0000180d-0000-1000-8000-00805f9b34fb"], rssi: -70)
        let bthome = DiscoveryFilter(uuids: ["0000fcd2-0000-1000-8000-00805f9b34fb"], rssi: -90, duplicates: true)
        expectEqual(
            DiscoveryFilter.merged([heartRate, bthome]),
            DiscoveryFilter(
                uuids: ["0000180d-0000-1000-8000-00805f9b34fb", "0000fcd2-0000-1000-8000-00805f9b34fb"], rssi: -90,
                duplicates: true))
        expectEqual(DiscoveryFilter.merged([heartRate, .none]), .none)
        expectEqual(DiscoveryFilter.merged([]), .none)
        expectEqual(DiscoveryFilter.none.dbusValue, .propertyMap([:]))
        expectEqual(
            heartRate.dbusValue,
            .propertyMap([
                "Transport": .string("le"), "RSSI": .int16(-70),
                "UUIDs": .array(.string, [.string("0000180d-0000-1000-8000-00805f9b34fb")]),
            ]))
    }

    // MARK: - AdvertisedData

    @Test func advertisedDataReadsBlueZsShapesAndCountsAnythingElse() {
        let bthome = "0000fcd2-0000-1000-8000-00805f9b34fb"
        let data = AdvertisedData(properties: [
            "Name": .string("BTHome-5"), "Alias": .string("AA-BB"), "RSSI": .int16(-66), "TxPower": .int16(4),
            "UUIDs": .strings(["0000180F-0000-1000-8000-00805f9b34fb"]),
            "ManufacturerData": .dictionary(
                key: .uint16, value: .variant,
                [
                    DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes([2, 21]))),
                    DBusDictionaryEntry(.uint16(1), .variant(.string("not bytes"))),
                ]),
            "ServiceData": .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictionaryEntry(.string(bthome.uppercased()), .variant(.bytes([0x40, 0x01, 0x50]))),
                    DBusDictionaryEntry(.string("not a uuid"), .variant(.bytes([1]))),
                ]),
        ])
        expectEqual(data.name, "BTHome-5")
        expectEqual(data.rssi, -66)
        expectEqual(data.txPower, 4)
        expectEqual(data.manufacturerData, ["004c": Data([2, 21])])
        expectEqual(data.serviceData, [bthome: Data([0x40, 0x01, 0x50])])
        expectEqual(data.malformed, 2)
        expectTrue(data.matches([BluetoothUUID("fcd2")!]) && data.matches([BluetoothUUID("180f")!]) && data.matches([]))
        expectFalse(data.matches([BluetoothUUID("180d")!]))
        let wrongTypes = AdvertisedData(properties: [
            "ManufacturerData": .bytes([1, 2]), "ServiceData": .string("x"), "RSSI": .int32(-3),
        ])
        expectEqual(wrongTypes.malformed, 2)
        expectNil(wrongTypes.rssi)
        expectEqual(AdvertisedData.shortForm(bthome), "fcd2")
        expectEqual(
            AdvertisedData.shortForm("c0defeed-0002-4000-8000-000000000000"), "c0defeed-0002-4000-8000-000000000000")
    }
}
