import ContextBusWire

/// `disconnect`: `{"op":"disconnect"}`, without an argument or a timeout.
extension DisconnectStep: ChainSyntaxStep {
    static let forms = [StepForm(name: "disconnect", arguments: "", meaning: "disconnect")]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        try word.expectNoArgument()
        try word.expectNoTimeout()
        self.init()
    }

    var word: String { "disconnect" }
}
