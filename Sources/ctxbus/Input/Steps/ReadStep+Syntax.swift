import ContextBusWire

/// `read:UUID[@MS]`: `{"op":"read","characteristic":UUID}`.
extension ReadStep: ChainSyntaxStep {
    static let forms = [StepForm(name: "read", arguments: ":UUID[@MS]", meaning: "read a characteristic")]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        self.init(characteristic: try ChainSyntax.uuid(try word.requiredArgument()), timeoutMs: word.timeout)
    }

    var word: String { "read:\(characteristic)" }
}
