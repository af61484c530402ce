/// The BTHome v2 objects (https://bthome.io/format, "Sensor data", "Binary sensor data", "Events", "Device
/// information"), by object id: the table `BTHome.decode(_:)` reads an advertisement's objects with.
///
/// An object whose id is here has a known size, so the objects after it can be read too; an object with a `format`
/// decodes to a number (binary sensors to 0 or 1), one without (events, device information) is stepped over. The
/// variable-length objects (`0x53` text, `0x54` raw) carry their length in their first byte.
enum BTHomeObjects {
    /// One kind of object.
    struct Kind: Sendable, Hashable {
        /// The property's name as the format names it (`temperature`, `battery`, `motion`).
        var name: String
        /// Its size in bytes (for the variable-length ones, 0: the first byte holds the length).
        var size: Int
        /// How it becomes a number; `nil` for objects that are not measurements.
        var format: ValueFormat?
        var unit: String?
    }

    static func kind(_ id: UInt8) -> Kind? { table[id] }

    private static func number(
        _ name: String, _ size: Int, signed: Bool = false, factor: Double = 1, _ unit: String? = nil
    ) -> Kind {
        Kind(name: name, size: size, format: .integer(size: size, signed: signed, factor: factor), unit: unit)
    }

    private static func binary(_ name: String) -> Kind {
        Kind(name: name, size: 1, format: .integer(size: 1, signed: false), unit: nil)
    }

    private static func other(_ name: String, _ size: Int) -> Kind {
        Kind(name: name, size: size, format: nil, unit: nil)
    }

    private static let table: [UInt8: Kind] = [
        0x00: other("packet id", 1),
        0x01: number("battery", 1, "%"),
        0x02: number("temperature", 2, signed: true, factor: 0.01, "°C"),
        0x03: number("humidity", 2, factor: 0.01, "%"),
        0x04: number("pressure", 3, factor: 0.01, "hPa"),
        0x05: number("illuminance", 3, factor: 0.01, "lux"),
        0x06: number("mass", 2, factor: 0.01, "kg"),
        0x07: number("mass", 2, factor: 0.01, "lb"),
        0x08: number("dewpoint", 2, signed: true, factor: 0.01, "°C"),
        0x09: number("count", 1),
        0x0A: number("energy", 3, factor: 0.001, "kWh"),
        0x0B: number("power", 3, factor: 0.01, "W"),
        0x0C: number("voltage", 2, factor: 0.001, "V"),
        0x0D: number("pm2.5", 2, "µg/m³"),
        0x0E: number("pm10", 2, "µg/m³"),
        0x0F: binary("generic boolean"),
        0x10: binary("power"),
        0x11: binary("opening"),
        0x12: number("co2", 2, "ppm"),
        0x13: number("tvoc", 2, "µg/m³"),
        0x14: number("moisture", 2, factor: 0.01, "%"),
        0x15: binary("battery low"),
        0x16: binary("battery charging"),
        0x17: binary("carbon monoxide"),
        0x18: binary("cold"),
        0x19: binary("connectivity"),
        0x1A: binary("door"),
        0x1B: binary("garage door"),
        0x1C: binary("gas"),
        0x1D: binary("heat"),
        0x1E: binary("light"),
        0x1F: binary("lock"),
        0x20: binary("moisture"),
        0x21: binary("motion"),
        0x22: binary("moving"),
        0x23: binary("occupancy"),
        0x24: binary("plug"),
        0x25: binary("presence"),
        0x26: binary("problem"),
        0x27: binary("running"),
        0x28: binary("safety"),
        0x29: binary("smoke"),
        0x2A: binary("sound"),
        0x2B: binary("tamper"),
        0x2C: binary("vibration"),
        0x2D: binary("window"),
        0x2E: number("humidity", 1, "%"),
        0x2F: number("moisture", 1, "%"),
        0x3A: other("button", 1),
        0x3C: other("dimmer", 2),
        0x3D: number("count", 2),
        0x3E: number("count", 4),
        0x3F: number("rotation", 2, signed: true, factor: 0.1, "°"),
        0x40: number("distance", 2, "mm"),
        0x41: number("distance", 2, factor: 0.1, "m"),
        0x42: number("duration", 3, factor: 0.001, "s"),
        0x43: number("current", 2, factor: 0.001, "A"),
        0x44: number("speed", 2, factor: 0.01, "m/s"),
        0x45: number("temperature", 2, signed: true, factor: 0.1, "°C"),
        0x46: number("uv index", 1, factor: 0.1),
        0x47: number("volume", 2, factor: 0.1, "L"),
        0x48: number("volume", 2, "mL"),
        0x49: number("volume flow rate", 2, factor: 0.001, "m³/h"),
        0x4A: number("voltage", 2, factor: 0.1, "V"),
        0x4B: number("gas", 3, factor: 0.001, "m³"),
        0x4C: number("gas", 4, factor: 0.001, "m³"),
        0x4D: number("energy", 4, factor: 0.001, "kWh"),
        0x4E: number("volume", 4, factor: 0.001, "L"),
        0x4F: number("water", 4, factor: 0.001, "L"),
        0x50: other("timestamp", 4),
        0x51: number("acceleration", 2, factor: 0.001, "m/s²"),
        0x52: number("gyroscope", 2, factor: 0.001, "°/s"),
        0x53: other("text", 0),
        0x54: other("raw", 0),
        0x55: number("volume storage", 4, factor: 0.001, "L"),
        0x56: number("conductivity", 2, "µS/cm"),
        0x57: number("temperature", 1, signed: true, "°C"),
        0x58: number("temperature", 1, signed: true, factor: 0.35, "°C"),
        0x59: number("count", 1, signed: true),
        0x5A: number("count", 2, signed: true),
        0x5B: number("count", 4, signed: true),
        0x5C: number("power", 4, signed: true, factor: 0.01, "W"),
        0x5D: number("current", 2, signed: true, factor: 0.001, "A"),
        0x5E: number("direction", 2, factor: 0.01, "°"),
        0x5F: number("precipitation", 2, factor: 0.1, "mm"),
        0x60: number("channel", 1),
        0x61: number("rotational speed", 2, "rpm"),
        0xF0: other("device type id", 2),
        0xF1: other("firmware version", 4),
        0xF2: other("firmware version", 3),
    ]
}
