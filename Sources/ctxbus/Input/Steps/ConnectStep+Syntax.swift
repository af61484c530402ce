import ContextBusWire

/// `connect[@MS]`: `{"op":"connect"}`.
extension ConnectStep: ChainSyntaxStep {
    static let forms = [
        StepForm(name: "connect", arguments: "[@MS]", meaning: "connect (and wait for services to resolve)")
    ]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        try word.expectNoArgument()
        self.init(timeoutMs: word.timeout)
    }

    var word: String { "connect" }
}
