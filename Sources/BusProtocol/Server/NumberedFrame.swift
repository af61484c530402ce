import ContextBusSupport
import ContextBusTransport

/// A frame that many connections are sent with one integer of their own spliced in: the payload is `prefix`, the
/// number in decimal, then `suffix`. Encoding the shared parts once and splicing the number per connection is how
/// one event goes to many subscribers (`FrameFanOut`).
///
/// ```
/// ┌len┐ prefix ─── number ─── suffix
///        shared    per peer    shared
/// ```
package struct NumberedFrame: Sendable {
    /// The payload bytes before the number.
    package let prefix: [UInt8]
    /// The payload bytes after the number.
    package let suffix: [UInt8]

    package init(prefix: [UInt8], suffix: [UInt8]) {
        self.prefix = prefix
        self.suffix = suffix
    }

    /// The payload's length (without the length header) for `number`.
    package func payloadLength(for number: Int64) -> Int {
        prefix.count + Self.decimalLength(of: number) + suffix.count
    }

    /// Appends the frame for `number`, length header included, to `output`.
    package func append(for number: Int64, into output: inout [UInt8]) {
        let value = UInt32(truncatingIfNeeded: payloadLength(for: number))
        output.append(UInt8(truncatingIfNeeded: value >> 24))
        output.append(UInt8(truncatingIfNeeded: value >> 16))
        output.append(UInt8(truncatingIfNeeded: value >> 8))
        output.append(UInt8(truncatingIfNeeded: value))
        output.append(contentsOf: prefix)
        JSONWriter.appendInteger(number, into: &output)
        output.append(contentsOf: suffix)
    }

    /// The frame for `number`, length header included.
    package func frame(for number: Int64) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(Frame.headerLength + payloadLength(for: number))
        append(for: number, into: &frame)
        return frame
    }

    /// The number of characters `JSONWriter.appendInteger` writes for `number`.
    static func decimalLength(of number: Int64) -> Int {
        var magnitude = number.magnitude
        var length = number < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            length += 1
        }
        return length
    }
}
