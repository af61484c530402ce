import Foundation
import TestSupport
import Testing

@testable import ContextBusWire
@testable import devicesvc

/// Records an issue unless `actual` is within a billionth of `expected`.
private func expectClose(
    _ actual: Double?, _ expected: Double, sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let actual, abs(actual - expected) < 1e-9 else {
        Issue.record("\(String(describing: actual)) is not \(expected)", sourceLocation: sourceLocation)
        return
    }
}

struct ValueDecodingTests {
    let decoders = CharacteristicDecoders.standard

    func decode(_ bytes: [UInt8], _ uuid: String) -> Quantity? {
        decoders.decode(Data(bytes), of: BluetoothUUID(uuid)!)
    }

    // MARK: - GATT characteristics

    @Test func batteryLevelIsAPercentage() {
        expectEqual(decode([87], "2a19"), Quantity(number: 87, unit: "%"))
        expectEqual(decode([87], "00002A19-0000-1000-8000-00805F9B34FB"), Quantity(number: 87, unit: "%"))
        expectNil(decode([], "2a19"))
    }

    @Test func temperatureIsSignedHundredthsOfADegreeAndItsUnknownValueDecodesToNothing() {
        expectEqual(decode([0x66, 0x08], "2a6e"), Quantity(number: 21.5, unit: "°C"))
        expectClose(decode([0x0A, 0x0A], "2a6e")?.number, 25.7)
        expectClose(decode([0x38, 0xFF], "2a6e")?.number, -2)
        expectNil(decode([0x00, 0x80], "2a6e"))
        expectNil(decode([0x66], "2a6e"))
    }

    @Test func humidityIsUnsignedHundredthsOfAPercent() {
        expectClose(decode([0xBF, 0x13], "2a6f")?.number, 50.55)
        expectEqual(decode([0xBF, 0x13], "2a6f")?.unit, "%")
        expectNil(decode([0xFF, 0xFF], "2a6f"))
    }

    @Test func heartRateIsAByteOrAWordAsItsFlagsSay() {
        expectEqual(decode([0x00, 72], "2a37"), Quantity(number: 72, unit: "bpm"))
        expectEqual(decode([0x01, 0x2C, 0x01], "2a37"), Quantity(number: 300, unit: "bpm"))
        // Flags with sensor contact and energy expended bits set do not change where the rate is.
        expectEqual(decode([0x0E, 65, 0x10, 0x00], "2a37"), Quantity(number: 65, unit: "bpm"))
        expectNil(decode([0x01, 0x2C], "2a37"))
        expectNil(decode([], "2a37"))
    }

    @Test func anUnknownCharacteristicDoesNotDecode() {
        expectNil(decode([1, 2], "2a29"))
    }

    // MARK: - --decode

    @Test func theCommandLineAddsAndReplacesFormats() throws {
        var decoders = decoders
        let (uuid, entry) = try CharacteristicDecoders.parse("c0defeed-0002-4000-8000-000000000000=uint16*0.1:V")
        decoders.set(entry, for: uuid)
        expectEqual(decoders.decode(Data([0x64, 0x00]), of: uuid), Quantity(number: 10, unit: "V"))
        let (temperature, signed) = try CharacteristicDecoders.parse("2a6e=sint8@1")
        decoders.set(signed, for: temperature)
        expectEqual(decoders.decode(Data([0x00, 0xFE]), of: temperature), Quantity(number: -2, unit: nil))
        let (_, float) = try CharacteristicDecoders.parse("2a00=float32:m")
        expectEqual(
            float.format.decode(Array(withUnsafeBytes(of: Float(1.5).bitPattern.littleEndian) { Data($0) })), 1.5)
        let (_, wide) = try CharacteristicDecoders.parse("2a01=sint24")
        expectEqual(wide.format.decode([0xFF, 0xFF, 0xFF]), -1)
    }

    @Test func badDecodeSpecsSayWhatIsWrong() {
        for (spec, fragment) in [
            ("2a6e", "expected UUID=FORMAT"), ("zz=uint8", "is not a UUID"), ("2a6e=int16", "is not a format"),
            ("2a6e=uint16*x", "is not a factor"), ("2a6e=uint16*0", "is not a factor"),
            ("2a6e=uint16@-1", "is not a byte offset"),
        ] {
            do {
                _ = try CharacteristicDecoders.parse(spec)
                Issue.record("\(spec) was accepted")
            } catch {
                expectTrue(error.description.contains(fragment), "\(spec): \(error.description)")
            }
        }
    }

    // MARK: - BTHome

    @Test func bthomeObjectsDecodeWithTheirFactorsAndUnits() {
        // The example of bthome.io/format: temperature 25.06 °C, humidity 50.55 %.
        let payload = BTHome.decode(Data([0x40, 0x02, 0xCA, 0x09, 0x03, 0xBF, 0x13]))
        expectNil(payload.skipped)
        expectEqual(payload.values.map(\.name), ["temperature", "humidity"])
        expectClose(payload.values[0].number, 25.06)
        expectEqual(payload.values[0].unit, "°C")
        expectClose(payload.values[1].number, 50.55)
        let more = BTHome.decode(
            Data([0x44, 0x00, 0x09, 0x01, 0x61, 0x04, 0x13, 0x8A, 0x01, 0x21, 0x01, 0x45, 0x0A, 0xFF]))
        expectEqual(more.packetID, 9)
        expectNil(more.skipped)
        expectEqual(more.values.map(\.name), ["battery", "pressure", "motion", "temperature"])
        expectEqual(more.values[0].number, 97)
        expectClose(more.values[1].number, 1008.83)
        expectEqual(more.values[1].unit, "hPa")
        expectEqual(more.values[2].number, 1)
        expectNil(more.values[2].unit)
        expectClose(more.values[3].number, -24.6)
    }

    @Test func variableLengthAndNonMeasurementObjectsAreSteppedOver() {
        let payload = BTHome.decode(Data([0x40, 0x53, 0x02, 0x68, 0x69, 0x3A, 0x01, 0xF0, 0x01, 0x00, 0x01, 0x50]))
        expectNil(payload.skipped)
        expectEqual(payload.values, [DecodedValue(name: "battery", number: 80, unit: "%")])
    }

    @Test func malformedBTHomePayloadsAreSkippedWithTheReasonAndKeepWhatCameBefore() {
        expectEqual(BTHome.decode(Data()).skipped, .empty)
        expectEqual(BTHome.decode(Data([0x41, 0x02, 0xCA, 0x09])).skipped, .encrypted)
        expectEqual(BTHome.decode(Data([0x20, 0x02, 0xCA, 0x09])).skipped, .unsupportedVersion(1))
        let unknown = BTHome.decode(Data([0x40, 0x01, 0x50, 0x7F, 0x01, 0x02]))
        expectEqual(unknown.skipped, .unknownObject(id: 0x7F, at: 3))
        expectEqual(unknown.values.map(\.name), ["battery"])
        expectEqual(BTHome.decode(Data([0x40, 0x02, 0xCA])).skipped, .truncated(id: 0x02, at: 1))
        expectEqual(BTHome.decode(Data([0x40, 0x53])).skipped, .truncated(id: 0x53, at: 1))
        expectEqual(BTHome.decode(Data([0x40, 0x53, 0x05, 0x01])).skipped, .truncated(id: 0x53, at: 1))
    }

    @Test func noInputMakesTheDecodersTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let bytes = (0..<Int.random(in: 0...24, using: &generator)).map { _ in UInt8.random(in: 0...255) }
            _ = BTHome.decode(Data([0x40] + bytes))
            _ = BTHome.decode(Data(bytes))
            for uuid in ["2a19", "2a6e", "2a6f", "2a37"] { _ = decode(bytes, uuid) }
        }
    }
}
