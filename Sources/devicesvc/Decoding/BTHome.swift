import ContextBusWire
import Foundation

/// BTHome v2 advertisements (https://bthome.io/format): service data under the 16-bit UUID `fcd2`, a device
/// information byte, then objects — an object id followed by its value, whose size the id fixes.
///
/// ```
/// 40       02 ca 09          03 bf 13
/// v2, no   temperature       humidity
/// encryption  25.06 °C       50.55 %
/// ```
///
/// A payload decodes as far as it can: an object cut short or with an id the format does not define ends the
/// reading (the size of what follows is unknown), and the payload counts as skipped; so does an encrypted one (there
/// is no key to read it with) or one of another version. Nothing here traps on any input.
enum BTHome {
    /// The service data UUID BTHome advertises under.
    static let serviceUUID = BluetoothUUID("fcd2")!

    /// What a payload held: the values read, and whether part of it (or all) had to be skipped.
    struct Payload: Sendable, Hashable {
        var values: [DecodedValue] = []
        /// The packet id object (`0x00`), which a device changes for every new measurement.
        var packetID: UInt8?
        /// Why (part of) the payload was not decoded; `nil` when all of it was.
        var skipped: SkipReason?
    }

    /// Why a payload, or its tail, was not decoded.
    enum SkipReason: Sendable, Hashable, CustomStringConvertible {
        case empty
        case encrypted
        case unsupportedVersion(Int)
        case unknownObject(id: UInt8, at: Int)
        case truncated(id: UInt8, at: Int)

        var description: String {
            switch self {
            case .empty: return "empty BTHome payload"
            case .encrypted: return "encrypted BTHome payload (no key)"
            case .unsupportedVersion(let version): return "BTHome version \(version), not 2"
            case .unknownObject(let id, let at):
                return "unknown BTHome object id 0x\(String(id, radix: 16)) at byte \(at)"
            case .truncated(let id, let at):
                return "BTHome object 0x\(String(id, radix: 16)) at byte \(at) is cut short"
            }
        }
    }

    /// Reads a BTHome v2 service data payload.
    static func decode(_ data: Data) -> Payload {
        let bytes = Array(data)
        var payload = Payload()
        guard let info = bytes.first else {
            payload.skipped = .empty
            return payload
        }
        let version = Int(info >> 5)
        guard version == 2 else {
            payload.skipped = .unsupportedVersion(version)
            return payload
        }
        guard info & 0x01 == 0 else {
            payload.skipped = .encrypted
            return payload
        }
        var index = 1
        while index < bytes.count {
            let id = bytes[index]
            guard let kind = BTHomeObjects.kind(id) else {
                payload.skipped = .unknownObject(id: id, at: index)
                return payload
            }
            var valueStart = index + 1
            var size = kind.size
            if size == 0 {
                // Variable length: the first byte is the length of what follows.
                guard valueStart < bytes.count else {
                    payload.skipped = .truncated(id: id, at: index)
                    return payload
                }
                size = Int(bytes[valueStart])
                valueStart += 1
            }
            guard valueStart + size <= bytes.count else {
                payload.skipped = .truncated(id: id, at: index)
                return payload
            }
            let value = Array(bytes[valueStart..<valueStart + size])
            if id == 0x00 { payload.packetID = value.first }
            if let format = kind.format, let number = format.decode(value) {
                payload.values.append(DecodedValue(name: kind.name, number: number, unit: kind.unit))
            }
            index = valueStart + size
        }
        return payload
    }
}
