import Foundation

/// The string operators, shared by the in-memory evaluator and the SQLite functions that
/// compiled SQL calls, so that both give the same answer for the same strings.
///
/// Strings are compared as Unicode scalars (byte-wise in UTF-8), not by canonical
/// equivalence: `"é"` (U+00E9) and `"e\u{301}"` differ unless `[d]` folds both to `"e"`.
/// `[c]` and `[d]` fold both sides with Foundation's `.caseInsensitive` /
/// `.diacriticInsensitive` before comparing. As with `NSString`, an empty search string is
/// never found: `BEGINSWITH ''`, `ENDSWITH ''` and `CONTAINS ''` are false.
package enum PredicateStringMatching {
    /// `s` folded by `[c]` / `[d]`.
    package static func fold(_ s: String, _ options: ObjectPredicate.StringOptions) -> String {
        var fold: String.CompareOptions = []
        if options.contains(.caseInsensitive) { fold.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
        return fold.isEmpty ? s : s.folding(options: fold, locale: nil)
    }

    package static func beginsWith(_ s: String, _ prefix: String, _ options: ObjectPredicate.StringOptions) -> Bool {
        let (x, y) = (Array(fold(s, options).utf8), Array(fold(prefix, options).utf8))
        return !y.isEmpty && x.count >= y.count && x[..<y.count].elementsEqual(y)
    }

    package static func endsWith(_ s: String, _ suffix: String, _ options: ObjectPredicate.StringOptions) -> Bool {
        let (x, y) = (Array(fold(s, options).utf8), Array(fold(suffix, options).utf8))
        return !y.isEmpty && x.count >= y.count && x[(x.count - y.count)...].elementsEqual(y)
    }

    /// Byte-wise search; UTF-8 is self-synchronising, so a byte match is a scalar match.
    package static func contains(_ s: String, _ part: String, _ options: ObjectPredicate.StringOptions) -> Bool {
        let (x, y) = (Array(fold(s, options).utf8), Array(fold(part, options).utf8))
        guard !y.isEmpty, x.count >= y.count else { return false }
        for start in 0...(x.count - y.count) where x[start] == y[0] {
            if x[start..<start + y.count].elementsEqual(y) { return true }
        }
        return false
    }

    /// `LIKE`: `*` matches any run of scalars (also none), `?` exactly one scalar, `\x` the
    /// scalar `x` itself. Whole-string match. Runs in O(|s|·|pattern|) at worst (greedy with
    /// one backtrack point), so hostile patterns cannot explode.
    package static func like(_ s: String, _ pattern: String, _ options: ObjectPredicate.StringOptions) -> Bool {
        enum Piece: Equatable {
            case scalar(Unicode.Scalar)
            case one
            case many
        }
        var pieces: [Piece] = []
        var escaped = false
        for c in fold(pattern, options).unicodeScalars {
            if escaped {
                pieces.append(.scalar(c))
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "*" {
                if pieces.last != .many { pieces.append(.many) }
            } else if c == "?" {
                pieces.append(.one)
            } else {
                pieces.append(.scalar(c))
            }
        }
        if escaped { pieces.append(.scalar("\\")) }
        let text = Array(fold(s, options).unicodeScalars)
        var (t, p) = (0, 0)
        var backtrack: (pattern: Int, text: Int)?
        while t < text.count {
            if p < pieces.count {
                switch pieces[p] {
                case .many:
                    backtrack = (p, t)
                    p += 1
                    continue
                case .one:
                    t += 1
                    p += 1
                    continue
                case .scalar(let c) where c == text[t]:
                    t += 1
                    p += 1
                    continue
                case .scalar:
                    break
                }
            }
            guard let b = backtrack else { return false }
            backtrack = (b.pattern, b.text + 1)
            p = b.pattern + 1
            t = b.text + 1
        }
        while p < pieces.count, pieces[p] == .many { p += 1 }
        return p == pieces.count
    }

    // MARK: - MATCHES

    /// The regular expression for a `MATCHES` pattern, anchored to the whole string;
    /// `nil` when `NSRegularExpression` rejects the pattern.
    ///
    /// `[c]` becomes `.caseInsensitive`; `[d]` folds the pattern's diacritics (and
    /// `matches` folds the subject's), since a pattern's case cannot be folded without
    /// changing escapes like `\D`.
    package static func regularExpression(
        _ pattern: String, _ options: ObjectPredicate.StringOptions
    ) -> NSRegularExpression? {
        let source = options.contains(.diacriticInsensitive) ? fold(pattern, .diacriticInsensitive) : pattern
        let regexOptions: NSRegularExpression.Options = options.contains(.caseInsensitive) ? [.caseInsensitive] : []
        // The pattern must be valid on its own: wrapping could otherwise balance a stray ')'.
        // (Foundation refuses an empty pattern, which simply matches the empty string.)
        guard source.isEmpty || (try? NSRegularExpression(pattern: source, options: regexOptions)) != nil else {
            return nil
        }
        // A pattern valid on its own can still swallow the wrapper's closing `)\z`: a `(?x)`
        // comment runs to the end of the line, and `\Q` quotes to the end of the pattern. The
        // `(?:` is then never closed, so the wrapper fails to compile; end the comment with a
        // newline, or the quote with `\E`. A newline or `\E` that did not end one would leave
        // `)\z` swallowed, so the first candidate that compiles is the one that fits.
        for ending in ["", "\n", "\\E"] {
            if let regex = try? NSRegularExpression(pattern: "\\A(?:" + source + ending + ")\\z", options: regexOptions)
            {
                return regex
            }
        }
        return nil
    }

    /// Whether `regex` (from `regularExpression`) matches all of `s`.
    package static func matches(
        _ s: String, _ regex: NSRegularExpression, _ options: ObjectPredicate.StringOptions
    ) -> Bool {
        let subject = options.contains(.diacriticInsensitive) ? fold(s, .diacriticInsensitive) : s
        let range = NSRange(location: 0, length: (subject as NSString).length)
        return regex.firstMatch(in: subject, options: [], range: range) != nil
    }
}
