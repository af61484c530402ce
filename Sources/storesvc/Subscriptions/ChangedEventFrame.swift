import ContextBusServer
import ContextBusSupport
import ContextBusWire

/// One transaction's `store.changed` event, encoded once for every subscription that sees the same change,
/// with only the `subscription` number spliced in per subscriber.
///
/// ```
/// ┌len┐{"jsonrpc":"2.0","method":"store.changed","params":{"subscription": 42 ,"txn":7,"author":…,"deleted":[]}}
///       └──────────────────────── head (fixed) ────────────────────────┘ └┬┘ └──────── tail (this event) ────────┘
///                                                                   spliced
/// ```
///
/// The params members are written in the order `subscription`, `txn`, `author`, `inserted`, `updated`,
/// `deleted`; the values (`StoreObject`s) go through the same `JSONWriter` as `RPCEvent`'s plain encoding, so
/// a frame parses to the same JSON as `RPCEvent(event).json` with that subscription number. Building a frame for
/// one more subscriber is two copies and a number, not an event build and an encoding.
struct ChangedEventFrame: Sendable {
    /// The head, then the subscription number, then everything after it (`,"txn":…}}`), for `FrameFanOut`.
    let numbered: NumberedFrame

    /// Encodes `event`'s params except its `subscription`.
    ///
    /// - Throws: `JSONWriteError` when a value is NaN or infinity.
    init(_ event: ChangedEvent, writer: JSONWriter = JSONWriter()) throws(JSONWriteError) {
        var tail: [UInt8] = []
        tail.reserveCapacity(256)
        JSONWriter.appendLiteral(#","txn":"#, into: &tail)
        JSONWriter.appendInteger(event.txn, into: &tail)
        JSONWriter.appendLiteral(#","author":"#, into: &tail)
        if let author = event.author {
            JSONWriter.appendString(author, into: &tail)
        } else {
            JSONWriter.appendLiteral("null", into: &tail)
        }
        JSONWriter.appendLiteral(#","inserted":"#, into: &tail)
        try Self.append(event.inserted, into: &tail, writer: writer)
        JSONWriter.appendLiteral(#","updated":"#, into: &tail)
        try Self.append(event.updated, into: &tail, writer: writer)
        JSONWriter.appendLiteral(#","deleted":["#, into: &tail)
        for (index, id) in event.deleted.enumerated() {
            if index > 0 { tail.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(id.description, into: &tail)
        }
        JSONWriter.appendLiteral("]}}", into: &tail)
        numbered = NumberedFrame(prefix: Self.head, suffix: tail)
    }

    /// The frame (length header included) of the event for `subscription`.
    ///
    /// The length is not checked against a limit here; `BusConnection.send(encodedEvent:)` and `FrameFanOut`
    /// refuse frames larger than the server's `maxFrame`.
    func frame(for subscription: Int64) -> [UInt8] {
        numbered.frame(for: subscription)
    }

    /// The payload of every `store.changed` frame up to the subscription number.
    private static let head: [UInt8] = {
        var head: [UInt8] = []
        JSONWriter.appendLiteral(#"{"jsonrpc":"2.0","method":"#, into: &head)
        JSONWriter.appendString(ChangedEvent.method, into: &head)
        JSONWriter.appendLiteral(#","params":{"subscription":"#, into: &head)
        return head
    }()

    private static func append(
        _ objects: [StoreObject], into output: inout [UInt8], writer: JSONWriter
    ) throws(JSONWriteError) {
        output.append(UInt8(ascii: "["))
        for (index, object) in objects.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            try writer.write(object.json, into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }
}
