import ContextBusWire

/// `notify:UUID[xCOUNT][@MS]`: `{"op":"notify","characteristic":UUID,"count":COUNT}` (`COUNT` defaults to 1).
extension NotifyStep: ChainSyntaxStep {
    static let forms = [
        StepForm(
            name: "notify", arguments: ":UUID[xCOUNT][@MS]",
            meaning: "collect COUNT notifications (default 1), e.g. notify:2a19x3")
    ]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        let text = try word.requiredArgument()
        var uuidText = text
        var count = 1
        if let x = text.firstIndex(where: { $0 == "x" || $0 == "X" }) {
            uuidText = text[..<x]
            count = try ChainSyntax.number(text[(x + 1)...], minimum: 1, what: "a notification count after 'x'")
        }
        self.init(characteristic: try ChainSyntax.uuid(uuidText), count: count, timeoutMs: word.timeout)
    }

    var word: String { "notify:\(characteristic)x\(count)" }
}
