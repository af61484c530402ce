import ContextBusWire

/// `write:UUID=HEX[@MS]`: `{"op":"write","characteristic":UUID,"value":HEX as base64,"response":true}`, and
/// `write-command:UUID=HEX[@MS]`, the same with `"response":false` (a write without response).
extension WriteStep: ChainSyntaxStep {
    static let forms = [
        StepForm(
            name: "write", arguments: ":UUID=HEX[@MS]",
            meaning: "write with response, e.g. write:2a06=01, write:2a06=0x0102"),
        StepForm(name: "write-command", arguments: ":UUID=HEX[@MS]", meaning: "write without response"),
    ]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        let text = try word.requiredArgument()
        guard let equals = text.firstIndex(of: "=") else {
            throw ChainSyntax.WordError(
                offset: text.endIndex, reason: "expected '=HEX' (the bytes to write) after the UUID")
        }
        self.init(
            characteristic: try ChainSyntax.uuid(text[..<equals]),
            value: try ChainSyntax.hexBytes(text[(equals + 1)...]),
            response: word.name == "write", timeoutMs: word.timeout)
    }

    var word: String { "\(response ? "write" : "write-command"):\(characteristic)=\(ChainSyntax.hex(value))" }
}
