import CContextBusSQLite
import ContextBusObjectGraph
import Foundation

/// The SQL functions compiled predicates call, registered on every connection the store
/// opens. Each runs the same Swift code as the in-memory evaluator, so SQL and memory agree.
///
/// | function | meaning |
/// | --- | --- |
/// | `cb_fold(x, options)` | `x` folded by `[c]`/`[d]` (options bits 1 and 2); non-text passes through |
/// | `cb_beginswith(a, b, options)` | `a BEGINSWITH b`; 0 when either is not text |
/// | `cb_endswith(a, b, options)` | `a ENDSWITH b` |
/// | `cb_contains(a, b, options)` | `a CONTAINS b` |
/// | `cb_like(a, b, options)` | `a LIKE b` with `*` and `?` |
/// | `cb_matches(a, b, options)` | `a MATCHES b`: ICU regex on the whole string (compiled once per statement) |
/// | `cb_uint_le(x)` | a BLOB of 1–8 bytes read as an unsigned little-endian integer; NULL otherwise |
///
/// All are deterministic and innocuous (no side effects). The string tests return 0 or 1,
/// never NULL; `cb_fold` returns NULL for NULL; `cb_uint_le` returns an INTEGER, a REAL
/// (the nearest double) above 2^63 − 1, or NULL for NULL, an empty or a longer BLOB, or any
/// non-BLOB argument.
public enum PredicateSQLFunctions {
    static let foldName = "cb_fold"
    static let unsignedIntegerName = "cb_uint_le"

    static func name(of op: ObjectPredicate.ComparisonOperator) -> String {
        switch op {
        case .beginsWith: return "cb_beginswith"
        case .endsWith: return "cb_endswith"
        case .contains: return "cb_contains"
        case .like: return "cb_like"
        case .matches: return "cb_matches"
        default: preconditionFailure("\(op.rawValue) is not a string operator")
        }
    }

    /// Why a function could not be registered.
    public struct RegistrationError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The SQLite result code.
        public var code: Int32
        public var function: String
        public var message: String
        public var description: String { "SQLite error \(code) registering \(function): \(message)" }
    }

    /// Registers the functions on a connection.
    ///
    /// - Parameter db: an open `sqlite3*`.
    /// - Throws: `RegistrationError` when SQLite refuses one.
    public static func register(on db: OpaquePointer) throws {
        let functions:
            [(String, Int32, @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void)] = [
                (foldName, 2, foldFunction),
                (unsignedIntegerName, 1, unsignedIntegerFunction),
                (name(of: .beginsWith), 3, beginsWithFunction),
                (name(of: .endsWith), 3, endsWithFunction),
                (name(of: .contains), 3, containsFunction),
                (name(of: .like), 3, likeFunction),
                (name(of: .matches), 3, matchesFunction),
            ]
        for (name, arity, function) in functions {
            let rc = sqlite3_create_function_v2(
                db, name, arity, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil, function, nil, nil, nil)
            guard rc == SQLITE_OK else {
                throw RegistrationError(code: rc, function: name, message: String(cString: sqlite3_errmsg(db)))
            }
        }
    }
}

// MARK: - Argument access

/// The text of an argument; `nil` unless its storage class is TEXT.
private func text(_ value: OpaquePointer?) -> String? {
    guard sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
    let count = Int(sqlite3_value_bytes(value))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}

private func options(_ value: OpaquePointer?) -> ObjectPredicate.StringOptions {
    ObjectPredicate.StringOptions(rawValue: UInt8(truncatingIfNeeded: sqlite3_value_int(value)))
}

private func arguments(_ argv: UnsafeMutablePointer<OpaquePointer?>?, _ count: Int) -> [OpaquePointer?] {
    (0..<count).map { argv?[$0] }
}

private func resultText(_ context: OpaquePointer?, _ s: String) {
    // Explicit length: a string may hold U+0000, which a C string would cut short.
    let bytes = Array(s.utf8)
    guard !bytes.isEmpty else {
        // A NULL pointer would make the result SQL NULL rather than ''.
        sqlite3_result_text(context, "", 0, csqlite_transient())
        return
    }
    bytes.withUnsafeBytes { raw in
        let start = raw.baseAddress?.assumingMemoryBound(to: CChar.self)
        sqlite3_result_text(context, start, Int32(bytes.count), csqlite_transient())
    }
}

// MARK: - Functions

private let foldFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, argv in
    let args = arguments(argv, 2)
    guard let s = text(args[0]) else {
        sqlite3_result_value(context, args[0])
        return
    }
    resultText(context, PredicateStringMatching.fold(s, options(args[1])))
}

/// `cb_uint_le(x)`: the same reading as the in-memory evaluator's (`PredicateScalar.unsignedLittleEndian`).
private let unsignedIntegerFunction:
    @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, _, argv in
        let value = argv?[0]
        // The type first: asking a value for its bytes may convert it. An empty BLOB may have
        // no pointer.
        guard sqlite3_value_type(value) == SQLITE_BLOB, let bytes = sqlite3_value_blob(value) else {
            sqlite3_result_null(context)
            return
        }
        let count = Int(sqlite3_value_bytes(value))
        switch PredicateScalar.unsignedLittleEndian(UnsafeRawBufferPointer(start: bytes, count: count)) {
        case .int(let i): sqlite3_result_int64(context, i)
        case .double(let d): sqlite3_result_double(context, d)
        default: sqlite3_result_null(context)
        }
    }

/// A three-argument string test: 0 unless both operands are text.
private func stringTest(
    _ context: OpaquePointer?, _ argv: UnsafeMutablePointer<OpaquePointer?>?,
    _ test: (String, String, ObjectPredicate.StringOptions) -> Bool
) {
    let args = arguments(argv, 3)
    guard let a = text(args[0]), let b = text(args[1]) else {
        sqlite3_result_int(context, 0)
        return
    }
    sqlite3_result_int(context, test(a, b, options(args[2])) ? 1 : 0)
}

private let beginsWithFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void =
    {
        context, _, argv in stringTest(context, argv, PredicateStringMatching.beginsWith)
    }

private let endsWithFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, argv in stringTest(context, argv, PredicateStringMatching.endsWith)
}

private let containsFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, argv in stringTest(context, argv, PredicateStringMatching.contains)
}

private let likeFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, argv in stringTest(context, argv, PredicateStringMatching.like)
}

/// A compiled pattern kept as SQLite auxiliary data on the pattern argument, so a constant
/// pattern is compiled once per statement rather than once per row.
private final class CachedPattern {
    let pattern: String
    let options: ObjectPredicate.StringOptions
    let regex: NSRegularExpression?

    init(pattern: String, options: ObjectPredicate.StringOptions) {
        self.pattern = pattern
        self.options = options
        self.regex = PredicateStringMatching.regularExpression(pattern, options)
    }
}

private let matchesFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
    context, _, argv in
    let args = arguments(argv, 3)
    guard let subject = text(args[0]), let pattern = text(args[1]) else {
        sqlite3_result_int(context, 0)
        return
    }
    let opts = options(args[2])
    var cached: CachedPattern?
    if let raw = sqlite3_get_auxdata(context, 1) {
        let entry = Unmanaged<CachedPattern>.fromOpaque(raw).takeUnretainedValue()
        if entry.pattern == pattern && entry.options == opts { cached = entry }
    }
    let entry = cached ?? CachedPattern(pattern: pattern, options: opts)
    if cached == nil {
        sqlite3_set_auxdata(context, 1, Unmanaged.passRetained(entry).toOpaque()) { raw in
            if let raw { Unmanaged<CachedPattern>.fromOpaque(raw).release() }
        }
    }
    guard let regex = entry.regex else {
        sqlite3_result_int(context, 0)
        return
    }
    sqlite3_result_int(context, PredicateStringMatching.matches(subject, regex, opts) ? 1 : 0)
}
