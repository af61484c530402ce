import ContextBusWire

/// `wait:MS`: `{"op":"wait","ms":MS}`, without a timeout.
extension WaitStep: ChainSyntaxStep {
    static let forms = [StepForm(name: "wait", arguments: ":MS", meaning: "wait MS milliseconds")]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        try word.expectNoTimeout()
        let text = try word.requiredArgument()
        self.init(ms: try ChainSyntax.number(text, minimum: 0, what: "milliseconds after 'wait:'"))
    }

    var word: String { "wait:\(ms)" }
}
