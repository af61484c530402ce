import ContextBusWire
import Foundation

/// The compact chain syntax of `ctxbus device run`: one word per step, `NAME[:ARGUMENT][@MS]` — `connect`,
/// `read:UUID`, `write:UUID=HEX`, `write-command:UUID=HEX`, `notify:UUID[xCOUNT]`, `wait:MS`, `disconnect`.
///
/// `UUID` is a 16-bit short form (`2a19`) or a full 128-bit UUID; `HEX` is the bytes as pairs of
/// hexadecimal digits, optionally after `0x` (`01`, `0x0102ff`); `@MS` is the step's timeout in
/// milliseconds (`timeoutMs`), at least 1; `COUNT` is at least 1. Example:
/// `connect read:2a19 write:2a06=01 notify:2a19x3@5000 wait:500 disconnect`.
///
/// Each kind of step spells itself (`ChainSyntaxStep`, a file per kind in `Input/Steps/` with its forms and the JSON
/// each stands for): this type splits a word into its name, argument and timeout (`StepWord`), hands it to the kind
/// with that name, and has the helpers the kinds read their arguments with.
enum ChainSyntax {
    /// Reads every word as a step.
    ///
    /// - Throws: `ChainSyntaxError` naming the first bad word, its position and the character at fault.
    static func parse(_ words: [String]) throws(ChainSyntaxError) -> [ChainStep] {
        var steps: [ChainStep] = []
        for (index, word) in words.enumerated() {
            do {
                steps.append(try parse(step: word))
            } catch {
                throw ChainSyntaxError(words: words, index: index, offset: error.offset, reason: error.reason)
            }
        }
        return steps
    }

    /// A problem inside one word: where (in characters) and what.
    struct WordError: Error {
        var offset: Int
        var reason: String
    }

    /// Every kind of step as the syntax spells it, in the order of `ChainStep.kinds`.
    static let kinds: [any ChainSyntaxStep.Type] = ChainStep.kinds.map { kind in
        guard let spelled = kind as? any ChainSyntaxStep.Type else {
            fatalError("ctxbus cannot spell '\(kind.operation.rawValue)' steps: \(kind) is not a ChainSyntaxStep")
        }
        return spelled
    }

    /// Reads one word as a step.
    static func parse(step text: String) throws(WordError) -> ChainStep {
        let word = try StepWord(text)
        guard let kind = kinds.first(where: { kind in kind.forms.contains { $0.name == word.name } }) else {
            let names = kinds.flatMap { $0.forms.map(\.name) }
            throw WordError(
                offset: 0,
                reason: "unknown step '\(word.name)'; expected \(names.dropLast().joined(separator: ", ")) "
                    + "or \(names.last ?? "")")
        }
        return ChainStep(try kind.init(word: word))
    }

    /// The chain back in the compact syntax (for progress lines and messages).
    static func text(of step: ChainStep) -> String {
        var text = step.spelled.word
        if let timeout = step.timeoutMs { text += "@\(timeout)" }
        return text
    }

    /// The forms of every kind, one line each, for `ctxbus device run --help`.
    static var help: String {
        let forms = kinds.flatMap { kind in kind.forms }
        return forms.map { "  " + $0.syntax.padding(toLength: 31, withPad: " ", startingAt: 0) + $0.meaning }
            .joined(separator: "\n")
    }

    // MARK: - Reading arguments

    static func uuid(_ text: ArraySlice<Character>) throws(WordError) -> BluetoothUUID {
        guard !text.isEmpty else { throw WordError(offset: text.startIndex, reason: "expected a UUID") }
        if let uuid = BluetoothUUID(String(text)) { return uuid }
        let bad =
            text.count == 4 || text.count == 36
            ? text.indices.first { !text[$0].isHexDigit && text[$0] != "-" } ?? text.startIndex : text.startIndex
        throw WordError(
            offset: bad,
            reason: "expected a 16-bit UUID like 2a19 or a 128-bit one like 00002a19-0000-1000-8000-00805f9b34fb, "
                + "got '\(String(text))'")
    }

    /// `UUID/DESCRIPTOR`: a characteristic and one of its descriptors.
    static func descriptorPath(_ text: ArraySlice<Character>) throws(WordError) -> (BluetoothUUID, BluetoothUUID) {
        guard let slash = text.lastIndex(of: "/") else {
            throw WordError(offset: text.endIndex, reason: "expected '/DESCRIPTOR' (a descriptor UUID) after the UUID")
        }
        return (try uuid(text[..<slash]), try uuid(text[(slash + 1)...]))
    }

    static func hexBytes(_ text: ArraySlice<Character>) throws(WordError) -> Data {
        var digits = text
        if digits.starts(with: ["0", "x"]) || digits.starts(with: ["0", "X"]) { digits = digits.dropFirst(2) }
        guard !digits.isEmpty else {
            throw WordError(offset: digits.startIndex, reason: "expected the bytes to write as hex digits, e.g. 01")
        }
        if let bad = digits.firstIndex(where: { !$0.isHexDigit }) {
            throw WordError(offset: bad, reason: "'\(digits[bad])' is not a hexadecimal digit")
        }
        guard digits.count % 2 == 0 else {
            throw WordError(offset: digits.endIndex, reason: "expected two hex digits per byte (an even number)")
        }
        var bytes = Data()
        var index = digits.startIndex
        while index < digits.endIndex {
            bytes.append(UInt8(String(digits[index..<(index + 2)]), radix: 16)!)
            index += 2
        }
        return bytes
    }

    static func number(_ text: ArraySlice<Character>, minimum: Int, what: String) throws(WordError) -> Int {
        guard let value = Int(String(text)), value >= minimum, text.allSatisfy(\.isASCII) else {
            throw WordError(
                offset: text.startIndex, reason: "expected \(what) (an integer of at least \(minimum))")
        }
        return value
    }

    /// The bytes as pairs of lowercase hexadecimal digits (`0a0b`).
    static func hex(_ data: Data) -> String {
        data.map { String(format: "%02x", $0) }.joined()
    }
}

/// A chain word that does not read as a step: which one, where in it, and why.
struct ChainSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every step word as given.
    var words: [String]
    /// The 0-based index of the bad word among `words`.
    var index: Int
    /// The character offset inside the bad word.
    var offset: Int
    var reason: String

    var word: String { words[index] }

    var description: String { "invalid chain step \(index + 1) '\(word)': \(reason)" }

    /// The chain on one line with a caret under the character at fault.
    var pointer: [String] {
        let column = words[..<index].reduce(0) { $0 + $1.count + 1 } + offset
        return ["  " + words.joined(separator: " "), "  " + String(repeating: " ", count: column) + "^"]
    }

    var usageError: UsageError { UsageError(description, detail: pointer) }
}
