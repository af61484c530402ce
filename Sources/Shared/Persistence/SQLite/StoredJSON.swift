import ContextBusSupport

/// How the SQLite store writes and reads the JSON text it keeps: `json` columns, history rows (`HistoryCodec`) and
/// the model in `Z_METADATA`.
///
/// The package's one codec, set up for storage: `JSONWriter` with sorted keys, so that equal values give equal
/// text, and `JSONParser` reading what this store and earlier versions wrote. The rule for NaN and infinities is
/// the codec's (docs/wire-format.md, "NaN and infinities"): they have no JSON form, and validation refuses them
/// before anything is written.
///
/// Databases written by versions before that rule may still hold infinities: as `±1e999` in `json` columns,
/// history rows and the stored model (a NaN became `null`), and in REAL columns. They read back as ±infinity. The
/// planner refuses to update an object that holds one until the value is replaced, so the only such values the
/// store writes again are an update's previous values and a deleted object's last values, in the history row:
/// there they are written as `null`, as those versions wrote a NaN.
enum StoredJSON {
    /// Sorted keys: the text of a value does not depend on the order its dictionaries were built in.
    static let writer = JSONWriter(sortsKeys: true)

    /// Reads `±1e999` as ±infinity, and keeps the last of repeated member names, as earlier versions read.
    static let parser: JSONParser = {
        var parser = JSONParser(rejectsDuplicateKeys: false)
        parser.readsOutOfRangeNumbersAsInfinity = true
        return parser
    }()

    /// Appends the text of `value`, or `null` when it holds NaN or an infinity (from an earlier version's database:
    /// see above).
    static func write(_ value: JSONValue, into output: inout [UInt8]) {
        let start = output.count
        do {
            try writer.write(value, into: &output)
        } catch {
            output.removeSubrange(start...)
            JSONWriter.appendLiteral("null", into: &output)
        }
    }

    /// Appends `value` as a JSON number, or `null` when it is NaN or an infinity (from an earlier version's
    /// database: see above).
    static func write(_ value: Double, into output: inout [UInt8]) {
        do {
            try JSONWriter.appendDouble(value, into: &output)
        } catch {
            JSONWriter.appendLiteral("null", into: &output)
        }
    }

    /// The value of stored text; `nil` when it is not JSON.
    static func parse(_ text: String) -> JSONValue? {
        try? parser.parse(text)
    }

    /// The value of stored UTF-8 text; `nil` when it is not JSON.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        try? parser.parse(bytes)
    }
}
