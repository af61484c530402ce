import ContextBusSupport

/// A `name=value` word: `--arg min=20` (predicate arguments) and `key=value` (values in
/// `store save --insert`).
///
/// The value is read as JSON when it is valid JSON, otherwise taken as a string:
/// `min=20` is the number 20, `on=true` a bool, `ids=["Device/1"]` an array, `name=thermo` the
/// string "thermo"; to pass a string that looks like JSON, quote it as JSON: `name='"20"'`.
struct KeyValueArgument: Sendable, Hashable {
    var key: String
    var value: JSONValue

    /// Reads `word`; `option` names the option for the error message.
    ///
    /// - Throws: `UsageError` when there is no `=` or the name is empty.
    init(parsing word: String, option: String) throws(UsageError) {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
            throw UsageError("invalid \(option) '\(word)': expected name=value")
        }
        key = String(word[..<equals])
        value = Self.value(of: String(word[word.index(after: equals)...]))
    }

    /// The text as JSON when it parses, else as a string.
    static func value(of text: String) -> JSONValue {
        (try? JSONParser().parse(text)) ?? .string(text)
    }

    /// The words as an object; a name given twice keeps its last value.
    static func object(_ words: [String], option: String) throws(UsageError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for word in words {
            let argument = try KeyValueArgument(parsing: word, option: option)
            members[argument.key] = argument.value
        }
        return members
    }
}
