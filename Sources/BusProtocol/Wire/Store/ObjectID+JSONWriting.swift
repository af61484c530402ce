import ContextBusObjectGraph
import ContextBusSupport

extension ObjectID {
    /// The ID as a JSON string, `"Entity/N"` (`description`), written without making the `description` string for a
    /// permanent ID: answers and events write one per object.
    func writeJSON(into output: inout [UInt8]) {
        guard let number else {
            JSONWriter.appendString(description, into: &output)
            return
        }
        JSONWriter.appendString(entity, into: &output)
        output.removeLast()  // the entity's closing quote: the number goes inside the string
        output.append(UInt8(ascii: "/"))
        JSONWriter.appendInteger(number, into: &output)
        output.append(UInt8(ascii: "\""))
    }
}
