import Foundation

/// Standard base64 (RFC 4648, with padding) written straight into a byte buffer: the history
/// codec's binary values, without a `String` per value. Reads back with `Data(base64Encoded:)`.
enum Base64 {
    private static let alphabet: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 form of `data` to `out`.
    static func append(_ data: Data, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + (data.count + 2) / 3 * 4)
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            alphabet.withUnsafeBufferPointer { table in
                var i = 0
                let count = bytes.count
                while i + 3 <= count {
                    let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                    out.append(table[Int(n >> 18 & 63)])
                    out.append(table[Int(n >> 12 & 63)])
                    out.append(table[Int(n >> 6 & 63)])
                    out.append(table[Int(n & 63)])
                    i += 3
                }
                let rest = count - i
                if rest == 1 {
                    let n = UInt32(bytes[i]) << 16
                    out.append(table[Int(n >> 18 & 63)])
                    out.append(table[Int(n >> 12 & 63)])
                    out.append(0x3D)
                    out.append(0x3D)
                } else if rest == 2 {
                    let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
                    out.append(table[Int(n >> 18 & 63)])
                    out.append(table[Int(n >> 12 & 63)])
                    out.append(table[Int(n >> 6 & 63)])
                    out.append(0x3D)
                }
            }
        }
    }
}
