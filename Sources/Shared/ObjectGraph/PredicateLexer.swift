/// Splits a predicate format string into tokens, iteratively (no recursion, so hostile input
/// of any length cannot exhaust the stack).
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ format: String) {
        scalars = Array(format.unicodeScalars)
    }

    /// Every token, ending with `.end`.
    static func tokens(of format: String) throws(PredicateSyntaxError) -> [PredicateToken] {
        var lexer = PredicateLexer(format)
        var tokens: [PredicateToken] = []
        while true {
            let token = try lexer.next()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func peek(_ offset: Int = 0) -> Unicode.Scalar? {
        index + offset < scalars.count ? scalars[index + offset] : nil
    }

    private static func isWordStart(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (c.properties.isAlphabetic || c == "_")
    }

    private static func isWordPart(_ c: Unicode.Scalar) -> Bool {
        isWordStart(c) || isDigit(c)
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool { ("0"..."9").contains(c) }

    private mutating func word() -> String {
        var text = ""
        while let c = peek(), Self.isWordPart(c) {
            text.unicodeScalars.append(c)
            index += 1
        }
        return text
    }

    private mutating func next() throws(PredicateSyntaxError) -> PredicateToken {
        while let c = peek(), c.properties.isWhitespace { index += 1 }
        let start = index
        guard let c = peek() else { return PredicateToken(kind: .end, position: start) }
        func token(_ kind: PredicateToken.Kind) -> PredicateToken { PredicateToken(kind: kind, position: start) }

        if Self.isWordStart(c) { return token(.word(word())) }
        if Self.isDigit(c) { return token(.number(try number())) }
        switch c {
        case "'", "\"":
            return token(.string(try string(quote: c)))
        case "$", "#", "@":
            index += 1
            guard let first = peek(), Self.isWordStart(first) else {
                throw PredicateSyntaxError(position: start, message: "expected a name after '\(c)'")
            }
            let name = word()
            switch c {
            case "$": return token(.variable(name))
            case "#": return token(.escapedWord(name))
            default: return token(.collectionOperator(name))
            }
        case "[":
            return token(.options(try options()))
        default:
            break
        }
        let two = peek(1).map { String(c) + String($0) }
        if let two, ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
            index += 2
            return token(.symbol(two))
        }
        if "=<>!(){},.-".unicodeScalars.contains(c) {
            index += 1
            return token(.symbol(String(c)))
        }
        throw PredicateSyntaxError(position: start, message: "unexpected character '\(c.escaped(asASCII: true))'")
    }

    /// Digits, an optional fraction and an optional exponent. The sign is a separate `-` token.
    private mutating func number() throws(PredicateSyntaxError) -> String {
        var text = ""
        func digits() {
            while let c = peek(), Self.isDigit(c) {
                text.unicodeScalars.append(c)
                index += 1
            }
        }
        digits()
        if peek() == ".", let d = peek(1), Self.isDigit(d) {
            text += "."
            index += 1
            digits()
        }
        if let e = peek(), e == "e" || e == "E" {
            var offset = 1
            if let sign = peek(1), sign == "+" || sign == "-" { offset = 2 }
            guard let d = peek(offset), Self.isDigit(d) else {
                throw PredicateSyntaxError(position: index, message: "expected digits in the exponent of '\(text)'")
            }
            for i in 0..<offset { text.unicodeScalars.append(scalars[index + i]) }
            index += offset
            digits()
        }
        if let c = peek(), Self.isWordStart(c) {
            throw PredicateSyntaxError(position: index, message: "unexpected '\(c)' after the number '\(text)'")
        }
        return text
    }

    /// A quoted string. `\\ \' \" \n \t \r \0 \uXXXX` are escapes; any other backslash pair is
    /// kept as written, so that `LIKE 'a\*'` and `MATCHES '\d+'` reach their operator intact.
    private mutating func string(quote: Unicode.Scalar) throws(PredicateSyntaxError) -> String {
        let start = index
        index += 1
        var text = ""
        while let c = peek() {
            index += 1
            if c == quote { return text }
            guard c == "\\" else {
                text.unicodeScalars.append(c)
                continue
            }
            guard let e = peek() else { break }
            index += 1
            switch e {
            case "\\", "'", "\"": text.unicodeScalars.append(e)
            case "n": text += "\n"
            case "t": text += "\t"
            case "r": text += "\r"
            case "0": text += "\0"
            case "u":
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let h = peek(), let digit = hexValue(h) else {
                        throw PredicateSyntaxError(position: index, message: "expected 4 hex digits after '\\u'")
                    }
                    value = value * 16 + digit
                    index += 1
                }
                guard let scalar = Unicode.Scalar(value) else {
                    throw PredicateSyntaxError(position: index - 6, message: "'\\u' escape is not a Unicode scalar")
                }
                text.unicodeScalars.append(scalar)
            default:
                text.unicodeScalars.append("\\")
                text.unicodeScalars.append(e)
            }
        }
        throw PredicateSyntaxError(position: start, message: "unterminated string")
    }

    private func hexValue(_ c: Unicode.Scalar) -> UInt32? {
        switch c {
        case "0"..."9": return c.value - 48
        case "a"..."f": return c.value - 87
        case "A"..."F": return c.value - 55
        default: return nil
        }
    }

    /// `[c]`, `[d]`, `[cd]` (letters in any order and case).
    private mutating func options() throws(PredicateSyntaxError) -> ObjectPredicate.StringOptions {
        index += 1
        var options: ObjectPredicate.StringOptions = []
        while let c = peek(), c != "]" {
            switch c {
            case "c", "C": options.insert(.caseInsensitive)
            case "d", "D": options.insert(.diacriticInsensitive)
            default:
                throw PredicateSyntaxError(
                    position: index, message: "unknown string option '\(c.escaped(asASCII: true))' (use c or d)")
            }
            index += 1
        }
        guard peek() == "]" else { throw PredicateSyntaxError(position: index, message: "expected ']'") }
        index += 1
        return options
    }
}
