/// The changes made to one file since it was last synced, as `PowerCutDisk` keeps them beside the file so that a
/// cut can drop any of them after the process has died (tests only; `docs/testing.md`, "Power cuts").
///
/// The file itself always holds its latest content (every connection reads it as usual); the journal holds what
/// is needed to go back to the content it had when last synced, and forward again by any subset of the changes:
///
/// ```
///   | "PCJ1" | record | record | …         each record: | kind: 1 byte | payload | "END!" |
///   kind B  size: Int64                     the file's size when last synced (the first record after a sync)
///   kind P  offset: Int64, count: UInt32,   bytes the file held there when last synced, recorded before the
///           bytes                           first change that touches them
///   kind W  offset: Int64, count: UInt32,   a write
///           bytes
///   kind T  size: Int64                     a truncation
/// ```
///
/// Integers are little-endian. The records of one change are appended with one `write`, before the change reaches
/// the file; a process killed halfway leaves a torn last record, which `records(in:)` ignores (the change it
/// describes never reached the file). A sync of the file truncates its journal back to the magic.
enum PowerCutJournal {
    /// One change, or what undoing changes needs.
    enum Record: Equatable, Sendable {
        /// The file's size when it was last synced.
        case base(size: Int64)
        /// Bytes the file held at `offset` when it was last synced.
        case preimage(offset: Int64, bytes: [UInt8])
        /// A write of `bytes` at `offset`.
        case write(offset: Int64, bytes: [UInt8])
        /// A truncation (or extension) to `size`.
        case truncate(size: Int64)
    }

    static let magic: [UInt8] = Array("PCJ1".utf8)
    private static let trailer: [UInt8] = Array("END!".utf8)

    /// The bytes that append `records` to a journal.
    static func encode(_ records: [Record]) -> [UInt8] {
        var bytes: [UInt8] = []
        for record in records {
            switch record {
            case .base(let size):
                bytes.append(UInt8(ascii: "B"))
                append(size, to: &bytes)
            case .preimage(let offset, let data):
                bytes.append(UInt8(ascii: "P"))
                append(offset, to: &bytes)
                append(UInt32(data.count), to: &bytes)
                bytes += data
            case .write(let offset, let data):
                bytes.append(UInt8(ascii: "W"))
                append(offset, to: &bytes)
                append(UInt32(data.count), to: &bytes)
                bytes += data
            case .truncate(let size):
                bytes.append(UInt8(ascii: "T"))
                append(size, to: &bytes)
            }
            bytes += trailer
        }
        return bytes
    }

    /// The whole records of a journal's bytes, in order; a torn or unreadable tail is left out.
    static func records(in bytes: [UInt8]) -> [Record] {
        guard bytes.starts(with: magic) else { return [] }
        var reader = Reader(bytes: bytes, position: magic.count)
        var records: [Record] = []
        while let record = reader.record() { records.append(record) }
        return records
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    /// Reads records from a position; `nil` at the end or at a torn record.
    private struct Reader {
        let bytes: [UInt8]
        var position: Int

        mutating func record() -> Record? {
            guard let kind = byte() else { return nil }
            let record: Record
            switch kind {
            case UInt8(ascii: "B"):
                guard let size = integer(Int64.self) else { return nil }
                record = .base(size: size)
            case UInt8(ascii: "T"):
                guard let size = integer(Int64.self) else { return nil }
                record = .truncate(size: size)
            case UInt8(ascii: "P"), UInt8(ascii: "W"):
                guard let offset = integer(Int64.self), let count = integer(UInt32.self),
                    let data = take(Int(count))
                else { return nil }
                record =
                    kind == UInt8(ascii: "P")
                    ? .preimage(offset: offset, bytes: data) : .write(offset: offset, bytes: data)
            default:
                return nil
            }
            guard take(PowerCutJournal.trailer.count) == PowerCutJournal.trailer else { return nil }
            return record
        }

        private mutating func byte() -> UInt8? { take(1)?.first }

        private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) -> T? {
            guard let data = take(MemoryLayout<T>.size) else { return nil }
            var value: T = 0
            withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: data) }
            return T(littleEndian: value)
        }

        private mutating func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, bytes.count - position >= count else { return nil }
            defer { position += count }
            return Array(bytes[position..<position + count])
        }
    }
}
