/// One word of the compact chain syntax, split at its first ':' and its last '@': `write:2a06=01@500` is the name
/// `write`, the argument `2a06=01` and the timeout 500.
///
/// Offsets, in errors and in `argument`'s indices, count characters from the start of the word.
struct StepWord {
    /// What comes before ':' (or '@', or the end): the kind's name in the syntax (`write-command`).
    let name: String
    /// What follows ':', when there is one.
    let argument: ArraySlice<Character>?
    /// Where the word's part before '@' ends: the offset of '@', or the word's length.
    let end: Int
    /// The timeout in milliseconds after '@', when there is one.
    let timeout: Int?

    /// Splits `word`.
    ///
    /// - Throws: `ChainSyntax.WordError` when what follows '@' is not a timeout of at least 1 ms.
    init(_ word: String) throws(ChainSyntax.WordError) {
        let characters = Array(word)
        var body = characters[...]
        var timeout: Int?
        if let at = characters.lastIndex(of: "@") {
            body = characters[..<at]
            timeout = try ChainSyntax.number(
                characters[(at + 1)...], minimum: 1, what: "a timeout in milliseconds after '@'")
        }
        self.timeout = timeout
        let colon = body.firstIndex(of: ":")
        name = String(body[..<(colon ?? body.endIndex)])
        argument = colon.map { body[($0 + 1)...] }
        end = body.endIndex
    }

    /// The argument after ':', which the kind needs.
    ///
    /// - Throws: `ChainSyntax.WordError` ("'read' needs ':' and a UUID") when there is none, or it is empty.
    func requiredArgument() throws(ChainSyntax.WordError) -> ArraySlice<Character> {
        guard let argument, !argument.isEmpty else {
            throw ChainSyntax.WordError(offset: argument?.startIndex ?? end, reason: "'\(name)' needs ':' and a UUID")
        }
        return argument
    }

    /// Checks that the word has no ':' argument, for kinds that take none.
    func expectNoArgument() throws(ChainSyntax.WordError) {
        guard let argument else { return }
        throw ChainSyntax.WordError(offset: argument.startIndex - 1, reason: "'\(name)' takes no ':' argument")
    }

    /// Checks that the word has no '@' timeout, for kinds that take none.
    func expectNoTimeout() throws(ChainSyntax.WordError) {
        guard timeout != nil else { return }
        throw ChainSyntax.WordError(offset: end, reason: "'\(name)' takes no timeout")
    }
}
