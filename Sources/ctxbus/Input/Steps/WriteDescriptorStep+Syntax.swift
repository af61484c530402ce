import ContextBusWire

/// `write-descriptor:UUID/DESCRIPTOR=HEX[@MS]`:
/// `{"op":"writeDescriptor","characteristic":UUID,"descriptor":DESCRIPTOR,"value":HEX as base64}`.
extension WriteDescriptorStep: ChainSyntaxStep {
    static let forms = [
        StepForm(
            name: "write-descriptor", arguments: ":UUID/DESCRIPTOR=HEX[@MS]",
            meaning: "write a descriptor, e.g. write-descriptor:2a19/2901=6869")
    ]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        let text = try word.requiredArgument()
        guard let equals = text.firstIndex(of: "=") else {
            throw ChainSyntax.WordError(
                offset: text.endIndex, reason: "expected '=HEX' (the bytes to write) after the descriptor")
        }
        let (characteristic, descriptor) = try ChainSyntax.descriptorPath(text[..<equals])
        self.init(
            characteristic: characteristic, descriptor: descriptor,
            value: try ChainSyntax.hexBytes(text[(equals + 1)...]), timeoutMs: word.timeout)
    }

    var word: String { "write-descriptor:\(characteristic)/\(descriptor)=\(ChainSyntax.hex(value))" }
}
