/// Why a predicate format string does not parse: where, and what was wrong.
///
/// `position` is a 0-based offset into the format string counted in Unicode scalars (the
/// same as the character offset for text without combining marks or emoji sequences); an
/// error at the end of the input has `position == format.unicodeScalars.count`.
public struct PredicateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The 0-based offset of the offending token.
    public var position: Int
    /// What was expected or found there.
    public var message: String

    public init(position: Int, message: String) {
        self.position = position
        self.message = message
    }

    public var description: String { "predicate syntax error at \(position): \(message)" }
}
