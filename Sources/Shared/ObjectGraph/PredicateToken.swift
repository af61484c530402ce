/// One token of a predicate format string, with its position (in Unicode scalars).
struct PredicateToken: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// A bare word: a key or a keyword (keywords are recognised case-insensitively by the parser).
        case word(String)
        /// `#word`: a key even when it spells a keyword.
        case escapedWord(String)
        /// `$name`.
        case variable(String)
        /// A quoted string, escapes already processed.
        case string(String)
        /// The text of an unsigned number literal.
        case number(String)
        /// Punctuation and symbolic operators: `== != < <= > >= && || ! ( ) { } , . -`.
        case symbol(String)
        /// `@count` and friends, without the `@`.
        case collectionOperator(String)
        /// `[c]`, `[d]`, `[cd]`.
        case options(ObjectPredicate.StringOptions)
        case end
    }

    var kind: Kind
    var position: Int

    /// How the token reads in an error message.
    var quoted: String {
        switch kind {
        case .word(let w): return "'\(w)'"
        case .escapedWord(let w): return "'#\(w)'"
        case .variable(let v): return "'$\(v)'"
        case .string: return "a string"
        case .number(let n): return "'\(n)'"
        case .symbol(let s): return "'\(s)'"
        case .collectionOperator(let o): return "'@\(o)'"
        case .options: return "string options"
        case .end: return "the end of the predicate"
        }
    }
}
