import CContextBusNATS
import ContextBusSupport

/// One message read from a stream (or from a plain subscription).
struct StreamMessage: Sendable {
    var subject: String
    var data: [UInt8]
    /// Its sequence in the stream (0 for a message that did not come from a stream).
    var sequence: UInt64
    /// Messages left in the stream for this consumer after this one.
    var pending: UInt64
    /// The reply subject of a request, if any.
    var reply: String?

    /// Reads a libnats message (which the caller still owns).
    init(_ message: OpaquePointer) {
        subject = String(cString: natsMsg_GetSubject(message))
        data = JetStream.payload(of: message)
        sequence = 0
        pending = 0
        reply = natsMsg_GetReply(message).map { String(cString: $0) }
        var metadata: UnsafeMutablePointer<jsMsgMetaData>?
        if natsMsg_GetMetaData(&metadata, message) == NATS_OK, let metadata {
            sequence = metadata.pointee.Sequence.Stream
            pending = metadata.pointee.NumPending
            jsMsgMetaData_Destroy(metadata)
        }
    }
}

/// Reads a stream's messages in stream order from a sequence on, through an ephemeral pull consumer of its own
/// (no acks: the reader keeps its position itself). The server forgets the consumer 30 s after its reader stops
/// asking for messages.
///
/// Why not libnats' ordered consumer: after a reconnect libnats 3.4 makes it again on a thread of its own, which
/// races with closing it (a use after free the address sanitizer caught), and a consumer so remade was seen to stop
/// delivering for good. A reader's every failure is reported to its thread instead, which then makes a new reader
/// from the position it reached: nothing is made behind its back.
///
/// Used by one thread, which closes it.
final class StreamReader: @unchecked Sendable {
    // @unchecked Sendable: the subscription handle is used only by the thread that made the reader, which destroys
    // it in `close`.
    private let handle: OpaquePointer
    /// A durable consumer stays on the server when its reader closes (its successor goes on from it).
    private let isDurable: Bool

    init(handle: OpaquePointer, isDurable: Bool = false) {
        self.handle = handle
        self.isDurable = isDurable
    }

    /// Up to `batch` messages, waiting up to `timeoutMilliseconds` for the first; `[]` when none came.
    ///
    /// - Throws: `JetStream.Failure` when the consumer is gone or the connection failed (the server's heartbeats,
    ///   asked for on a wait of 500 ms or more, stopped): the caller closes this reader and makes another.
    func fetch(batch: Int, timeoutMilliseconds: Int64) throws -> [StreamMessage] {
        var request = jsFetchRequest()
        jsFetchRequest_Init(&request)
        request.Batch = Int32(batch)
        request.Expires = timeoutMilliseconds * 1_000_000
        if timeoutMilliseconds >= 500 { request.Heartbeat = timeoutMilliseconds / 4 * 1_000_000 }
        var list = natsMsgList()
        let status = natsSubscription_FetchRequest(&list, handle, &request)
        if status == NATS_TIMEOUT { return [] }
        guard status == NATS_OK else {
            throw JetStream.Failure(operation: "fetch", status: status, jetStreamCode: jsErrCode(0))
        }
        defer { natsMsgList_Destroy(&list) }
        var messages: [StreamMessage] = []
        messages.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            if let message = list.Msgs[index] { messages.append(StreamMessage(message)) }
        }
        return messages
    }

    /// Deletes an ephemeral consumer (when the server can be reached) and frees the subscription.
    func close() {
        if !isDurable { natsSubscription_Unsubscribe(handle) }
        natsSubscription_Destroy(handle)
    }
}
