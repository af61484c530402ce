extension ObjectPredicate {
    /// How deeply parentheses, `NOT`s and lists may nest. Deeper input is rejected with an
    /// error instead of risking the stack. The bound is low because SQLite's parser is: the
    /// system SQLite (3.40) overflows its parser stack at about 26 nested parenthesised groups
    /// (see `docs/predicates.md`, "Limits").
    public static let maximumNestingDepth = 20

    /// Parses an NSPredicate-style format string (the subset of `docs/protocol.md`, "Predicates").
    ///
    /// ```swift
    /// let p = try ObjectPredicate(format: "ANY readings.value > $min AND name BEGINSWITH[cd] 'th'")
    /// ```
    ///
    /// Precedence, loosest first: `OR` / `||`, `AND` / `&&`, `NOT` / `!`, then comparisons.
    /// Keywords are case-insensitive. The grammar is in `docs/predicates.md`.
    ///
    /// - Throws: `PredicateSyntaxError` with the 0-based position of the offending token.
    public init(format: String) throws(PredicateSyntaxError) {
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(of: format))
        self = try parser.parseWhole()
    }
}

/// A recursive-descent parser over the lexer's tokens. Recursion happens only for
/// parentheses, `NOT` and nested lists, and is bounded by `ObjectPredicate.maximumNestingDepth`;
/// `AND`/`OR` chains of any length are parsed by loops into flat lists.
struct PredicateParser {
    private let tokens: [PredicateToken]
    private var index = 0
    private var depth = 0

    init(tokens: [PredicateToken]) {
        self.tokens = tokens
    }

    static let keywords: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH", "CONTAINS",
        "LIKE", "MATCHES", "TRUEPREDICATE", "FALSEPREDICATE", "NIL", "NULL", "TRUE", "FALSE", "YES", "NO",
    ]

    private var current: PredicateToken { tokens[index] }

    private func isKeyword(_ keyword: String) -> Bool {
        if case .word(let w) = current.kind { return w.uppercased() == keyword }
        return false
    }

    private func isSymbol(_ symbol: String) -> Bool {
        current.kind == .symbol(symbol)
    }

    private mutating func advance() { index += 1 }

    private func error(_ message: String, at token: PredicateToken? = nil) -> PredicateSyntaxError {
        PredicateSyntaxError(position: (token ?? current).position, message: message)
    }

    private mutating func enterNesting() throws(PredicateSyntaxError) {
        depth += 1
        guard depth <= ObjectPredicate.maximumNestingDepth else {
            throw error("the predicate nests deeper than \(ObjectPredicate.maximumNestingDepth) levels")
        }
    }

    mutating func parseWhole() throws(PredicateSyntaxError) -> ObjectPredicate {
        if current.kind == .end { throw error("the predicate is empty") }
        let predicate = try parseOr()
        guard current.kind == .end else {
            if isSymbol(")") { throw error("unbalanced ')'") }
            throw error("found \(current.quoted) after a complete predicate")
        }
        return predicate
    }

    // MARK: - Compound predicates

    private mutating func parseOr() throws(PredicateSyntaxError) -> ObjectPredicate {
        var items = [try parseAnd()]
        while isKeyword("OR") || isSymbol("||") {
            advance()
            items.append(try parseAnd())
        }
        return items.count == 1 ? items[0] : .or(items)
    }

    private mutating func parseAnd() throws(PredicateSyntaxError) -> ObjectPredicate {
        var items = [try parseNot()]
        while isKeyword("AND") || isSymbol("&&") {
            advance()
            items.append(try parseNot())
        }
        return items.count == 1 ? items[0] : .and(items)
    }

    /// `NOT`s are counted in a loop, then wrapped around the operand.
    private mutating func parseNot() throws(PredicateSyntaxError) -> ObjectPredicate {
        let outerDepth = depth
        var negations = 0
        while isKeyword("NOT") || isSymbol("!") {
            advance()
            negations += 1
            try enterNesting()
        }
        var predicate = try parsePrimary()
        for _ in 0..<negations { predicate = .not(predicate) }
        depth = outerDepth
        return predicate
    }

    private mutating func parsePrimary() throws(PredicateSyntaxError) -> ObjectPredicate {
        if isSymbol("(") {
            let open = current
            advance()
            try enterNesting()
            if current.kind == .end { throw error("expected a predicate after '('") }
            let inner = try parseOr()
            guard isSymbol(")") else {
                if current.kind == .end { throw error("unbalanced '(': no matching ')'", at: open) }
                throw error("expected ')' or a logical operator, found \(current.quoted)")
            }
            advance()
            depth -= 1
            return inner
        }
        if isKeyword("TRUEPREDICATE") {
            advance()
            return .constant(true)
        }
        if isKeyword("FALSEPREDICATE") {
            advance()
            return .constant(false)
        }
        return try parseComparison()
    }

    // MARK: - Comparisons

    private mutating func parseComparison() throws(PredicateSyntaxError) -> ObjectPredicate {
        var quantifier: ObjectPredicate.Quantifier?
        var negated = false
        if isKeyword("ANY") || isKeyword("SOME") {
            quantifier = .any
        } else if isKeyword("ALL") {
            quantifier = .all
        } else if isKeyword("NONE") {
            quantifier = .any
            negated = true
        }
        if quantifier != nil { advance() }
        let lhsToken = current
        let lhs = try parseExpression(context: "a predicate")
        let opToken = current
        guard let op = comparisonOperator() else {
            if opToken.kind == .end {
                throw error("expected a comparison operator after \(lhsToken.quoted)")
            }
            throw error("expected a comparison operator, found \(opToken.quoted)")
        }
        advance()
        var options: ObjectPredicate.StringOptions = []
        if case .options(let o) = current.kind {
            options = o
            advance()
        }
        let rhs = try parseExpression(context: "'\(opText(opToken))'")
        let comparison = ObjectPredicate.comparison(.init(lhs, op, rhs, quantifier: quantifier, options: options))
        return negated ? .not(comparison) : comparison
    }

    private func opText(_ token: PredicateToken) -> String {
        switch token.kind {
        case .symbol(let s): return s
        case .word(let w): return w
        default: return "?"
        }
    }

    private func comparisonOperator() -> ObjectPredicate.ComparisonOperator? {
        switch current.kind {
        case .symbol(let s):
            switch s {
            case "==", "=": return .equal
            case "!=", "<>": return .notEqual
            case "<": return .less
            case "<=", "=<": return .lessOrEqual
            case ">": return .greater
            case ">=", "=>": return .greaterOrEqual
            default: return nil
            }
        case .word(let w):
            switch w.uppercased() {
            case "BETWEEN": return .between
            case "IN": return .in
            case "BEGINSWITH": return .beginsWith
            case "ENDSWITH": return .endsWith
            case "CONTAINS": return .contains
            case "LIKE": return .like
            case "MATCHES": return .matches
            default: return nil
            }
        default:
            return nil
        }
    }

    // MARK: - Expressions

    private mutating func parseExpression(context: String) throws(PredicateSyntaxError) -> PredicateOperand {
        let token = current
        switch token.kind {
        case .end:
            throw error("expected a key path, a value or a variable after \(context)")
        case .string(let s):
            advance()
            return .literal(.string(s))
        case .number(let text):
            advance()
            return .literal(Self.number(text, negative: false))
        case .variable(let name):
            advance()
            return .variable(name)
        case .escapedWord(let name):
            return try parseKeyPath(first: name)
        case .symbol("-"):
            advance()
            guard case .number(let text) = current.kind else { throw error("expected a number after '-'") }
            advance()
            return .literal(Self.number(text, negative: true))
        case .symbol("{"):
            return try parseList()
        case .word(let w):
            switch w.uppercased() {
            case "NIL", "NULL":
                advance()
                return .literal(.null)
            case "TRUE", "YES":
                advance()
                return .literal(.bool(true))
            case "FALSE", "NO":
                advance()
                return .literal(.bool(false))
            case let upper where Self.keywords.contains(upper):
                throw error("unexpected keyword \(token.quoted); write '#\(w)' for a key of that name")
            default:
                return try parseKeyPath(first: w)
            }
        default:
            throw error("expected a key path, a value or a variable, found \(token.quoted)")
        }
    }

    /// `key(.key)*(.@count)?`, the first key already read from the current token.
    private mutating func parseKeyPath(first: String) throws(PredicateSyntaxError) -> PredicateOperand {
        advance()
        var keys = [first]
        while isSymbol(".") {
            advance()
            switch current.kind {
            case .word(let w) where !Self.keywords.contains(w.uppercased()):
                keys.append(w)
                advance()
            case .escapedWord(let w):
                keys.append(w)
                advance()
            case .collectionOperator("count"):
                advance()
                if isSymbol(".") { throw error("'@count' must end the key path") }
                return .count(keys)
            case .collectionOperator(let other):
                throw error("unsupported collection operator '@\(other)' (only @count is supported)")
            default:
                throw error("expected a key after '.', found \(current.quoted)")
            }
        }
        return .keyPath(keys)
    }

    private mutating func parseList() throws(PredicateSyntaxError) -> PredicateOperand {
        let outerDepth = depth
        try enterNesting()
        advance()
        var items: [PredicateOperand] = []
        if isSymbol("}") {
            advance()
            depth = outerDepth
            return .list(items)
        }
        while true {
            items.append(try parseExpression(context: items.isEmpty ? "'{'" : "','"))
            if isSymbol(",") {
                advance()
                continue
            }
            guard isSymbol("}") else { throw error("expected ',' or '}' in a list, found \(current.quoted)") }
            advance()
            depth = outerDepth
            return .list(items)
        }
    }

    /// An integer when the text has no fraction or exponent and fits 64 bits, else a double.
    static func number(_ text: String, negative: Bool) -> PropertyValue {
        let signed = negative ? "-" + text : text
        if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let i = Int64(signed) {
            return .int(i)
        }
        return .double(Double(signed) ?? .nan)
    }
}
