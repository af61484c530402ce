import ContextBusWire
import Foundation

/// The compact chain syntax of `ctxbus device run`: one word per step.
///
/// ```
/// connect[@MS]                  {"op":"connect"}
/// read:UUID[@MS]                {"op":"read","characteristic":UUID}
/// write:UUID=HEX[@MS]           {"op":"write","characteristic":UUID,"value":HEX as base64,"response":true}
/// write-command:UUID=HEX[@MS]   the same with "response":false (a write without response)
/// notify:UUID[xCOUNT][@MS]      {"op":"notify","characteristic":UUID,"count":COUNT}  (COUNT defaults to 1)
/// wait:MS                       {"op":"wait","ms":MS}
/// disconnect                    {"op":"disconnect"}
/// ```
///
/// `UUID` is a 16-bit short form (`2a19`) or a full 128-bit UUID; `HEX` is the bytes as pairs of
/// hexadecimal digits, optionally after `0x` (`01`, `0x0102ff`); `@MS` is the step's timeout in
/// milliseconds (`timeoutMs`), at least 1; `COUNT` is at least 1. Example:
/// `connect read:2a19 write:2a06=01 notify:2a19x3@5000 wait:500 disconnect`.
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

    /// Reads one word as a step.
    static func parse(step word: String) throws(WordError) -> ChainStep {
        let characters = Array(word)
        // "@MS" at the end: the step's timeout.
        var body = characters[...]
        var timeout: Int?
        if let at = characters.lastIndex(of: "@") {
            body = characters[..<at]
            timeout = try number(characters[(at + 1)...], minimum: 1, what: "a timeout in milliseconds after '@'")
        }
        let colon = body.firstIndex(of: ":")
        let operation = String(body[..<(colon ?? body.endIndex)])
        let argument = colon.map { body[($0 + 1)...] }
        switch operation {
        case "connect", "disconnect":
            if let colon { throw WordError(offset: colon, reason: "'\(operation)' takes no ':' argument") }
            if operation == "disconnect" {
                if timeout != nil {
                    throw WordError(offset: body.endIndex, reason: "'disconnect' takes no timeout")
                }
                return .disconnect
            }
            return .connect(timeoutMs: timeout)
        case "read":
            let uuid = try self.uuid(try required(argument, after: operation, at: body.endIndex))
            return .read(characteristic: uuid, timeoutMs: timeout)
        case "write", "write-command":
            let text = try required(argument, after: operation, at: body.endIndex)
            guard let equals = text.firstIndex(of: "=") else {
                throw WordError(offset: text.endIndex, reason: "expected '=HEX' (the bytes to write) after the UUID")
            }
            let uuid = try self.uuid(text[..<equals])
            let bytes = try hexBytes(text[(equals + 1)...])
            return .write(
                characteristic: uuid, value: bytes, response: operation == "write", timeoutMs: timeout)
        case "notify":
            let text = try required(argument, after: operation, at: body.endIndex)
            var uuidText = text
            var count = 1
            if let x = text.firstIndex(where: { $0 == "x" || $0 == "X" }) {
                uuidText = text[..<x]
                count = try number(text[(x + 1)...], minimum: 1, what: "a notification count after 'x'")
            }
            return .notify(characteristic: try uuid(uuidText), count: count, timeoutMs: timeout)
        case "wait":
            if timeout != nil { throw WordError(offset: body.endIndex, reason: "'wait' takes no timeout") }
            let text = try required(argument, after: operation, at: body.endIndex)
            return .wait(ms: try number(text, minimum: 0, what: "milliseconds after 'wait:'"))
        default:
            throw WordError(
                offset: 0,
                reason: "unknown step '\(operation)'; expected connect, read, write, write-command, notify, wait "
                    + "or disconnect")
        }
    }

    private static func required(
        _ argument: ArraySlice<Character>?, after operation: String, at end: Int
    )
        throws(WordError) -> ArraySlice<Character>
    {
        guard let argument, !argument.isEmpty else {
            throw WordError(offset: argument?.startIndex ?? end, reason: "'\(operation)' needs ':' and a UUID")
        }
        return argument
    }

    private static func uuid(_ text: ArraySlice<Character>) throws(WordError) -> BluetoothUUID {
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

    private static func hexBytes(_ text: ArraySlice<Character>) throws(WordError) -> Data {
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

    private static func number(_ text: ArraySlice<Character>, minimum: Int, what: String) throws(WordError) -> Int {
        guard let value = Int(String(text)), value >= minimum, text.allSatisfy(\.isASCII) else {
            throw WordError(
                offset: text.startIndex, reason: "expected \(what) (an integer of at least \(minimum))")
        }
        return value
    }

    /// The chain back in the compact syntax (for progress lines and messages).
    static func text(of step: ChainStep) -> String {
        let hex = { (data: Data) in data.map { String(format: "%02x", $0) }.joined() }
        var text: String
        var timeout: Int?
        switch step {
        case .connect(let t):
            text = "connect"
            timeout = t
        case .read(let c, let t):
            text = "read:\(c)"
            timeout = t
        case .write(let c, let value, let response, let t):
            text = "\(response ? "write" : "write-command"):\(c)=\(hex(value))"
            timeout = t
        case .notify(let c, let count, let t):
            text = "notify:\(c)x\(count)"
            timeout = t
        case .wait(let ms):
            text = "wait:\(ms)"
        case .disconnect:
            text = "disconnect"
        }
        if let timeout { text += "@\(timeout)" }
        return text
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
