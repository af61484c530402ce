import Foundation

extension PredicateScalar {
    /// The most bytes a binary value may hold to be read as a number: 64 bits.
    static let maximumIntegerByteCount = 8

    /// Bytes read as an unsigned little-endian integer, the byte order of Bluetooth GATT
    /// characteristic values (a battery level, 2a19, is one byte; a 16-bit value is two).
    ///
    /// One to eight bytes give an `.int`; a value above `Int64.max` (eight bytes with the top
    /// bit set) gives the nearest `.double`, as a number literal that large reads. No bytes,
    /// or more than eight, read as `.null`, so they never satisfy an ordering.
    ///
    /// The in-memory evaluator and the SQLite function `cb_uint_le` both call this, so the
    /// two agree by construction.
    package static func unsignedLittleEndian(_ bytes: some Collection<UInt8>) -> PredicateScalar {
        guard !bytes.isEmpty, bytes.count <= maximumIntegerByteCount else { return .null }
        var value: UInt64 = 0
        for (i, byte) in bytes.enumerated() { value |= UInt64(byte) << UInt64(8 * i) }
        if let exact = Int64(exactly: value) { return .int(exact) }
        return .double(Double(value))
    }

    /// A binary attribute's value read as a number (`unsignedLittleEndian`); anything that is
    /// not bytes (`nil`, or a value of the wrong type) reads as `.null`.
    var readAsUnsignedInteger: PredicateScalar {
        guard case .bytes(let data) = self else { return .null }
        return Self.unsignedLittleEndian(data)
    }
}
