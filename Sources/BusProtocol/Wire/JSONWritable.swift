import ContextBusSupport

/// A value that writes its own JSON text, without building a `JSONValue` tree first: the hot results of a service
/// (`store.get`'s objects), answered with `Responder.succeed(writing:)`.
///
/// What it writes must parse to the `json` of the method's typed result it stands for (tests compare the two).
package protocol JSONWritable: Sendable {
    /// Appends the JSON text to `output`.
    ///
    /// - Throws: `JSONWriteError.nonFiniteNumber` for NaN or infinity (the request is then answered `-32603`).
    func writeJSON(into output: inout [UInt8], writer: JSONWriter) throws(JSONWriteError)
}
