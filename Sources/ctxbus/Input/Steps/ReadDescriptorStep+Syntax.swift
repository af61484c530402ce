import ContextBusWire

/// `read-descriptor:UUID/DESCRIPTOR[@MS]`: `{"op":"readDescriptor","characteristic":UUID,"descriptor":DESCRIPTOR}`.
extension ReadDescriptorStep: ChainSyntaxStep {
    static let forms = [
        StepForm(
            name: "read-descriptor", arguments: ":UUID/DESCRIPTOR[@MS]",
            meaning: "read a descriptor, e.g. read-descriptor:2a19/2902")
    ]

    init(word: StepWord) throws(ChainSyntax.WordError) {
        let (characteristic, descriptor) = try ChainSyntax.descriptorPath(try word.requiredArgument())
        self.init(characteristic: characteristic, descriptor: descriptor, timeoutMs: word.timeout)
    }

    var word: String { "read-descriptor:\(characteristic)/\(descriptor)" }
}
