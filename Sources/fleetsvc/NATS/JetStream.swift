import CContextBusNATS
import ContextBusSupport
import Foundation
import Synchronization

/// The one Swift type over the NATS C client (`libnats`): a connection with JetStream, the fleet's stream,
/// publish-with-ack with a message ID, and readers of a stream from a position (`StreamReader`).
///
/// Every call blocks (on the network, up to its timeout): it is made only on the threads the bridge owns
/// (`Outbound`, `Inbound`, `CommandWorker`), never on the cooperative pool or an event loop. libnats is thread-safe
/// per connection; a `JetStreamSubscription` is used by one thread. The connection reconnects by itself, for
/// ever (`natsOptions_SetMaxReconnect(-1)`); calls made while it is down fail and are retried by the caller.
///
/// ```
///  Outbound ──publish(subject, data, msgID)──▶ js_Publish ──▶ JetStream  (PubAck: sequence, duplicate)
///  Inbound  ◀──fetch(batch, timeout)── natsSubscription_FetchRequest ◀── pull consumer from a stream sequence
/// ```
final class JetStream: @unchecked Sendable {
    // @unchecked Sendable: `connection` and `context` are libnats handles, which libnats makes safe to use from
    // any thread; they are set in `init` and destroyed in `close`, after every user thread has stopped.
    // Internal (not private) for the other types of this folder (`KeyValueBucket`), which use them the same way.
    let connection: OpaquePointer
    let context: OpaquePointer

    /// How many times the connection came back after a loss (libnats' reconnected callback).
    static let reconnects = Atomic<Int>(0)

    struct Failure: Error, CustomStringConvertible {
        let operation: String
        let status: natsStatus
        let jetStreamCode: jsErrCode
        var description: String {
            let text = String(cString: natsStatus_GetText(status))
            return jetStreamCode.rawValue == 0
                ? "\(operation): \(text)" : "\(operation): \(text) (JetStream error \(jetStreamCode.rawValue))"
        }
        var isTimeout: Bool { status == NATS_TIMEOUT }
    }

    struct Settings: Sendable {
        var url: String
        var name: String
        var credentialsFile: String?
        var certificateAuthorityFile: String?
    }

    /// Connects, without waiting while the server is away: the connection is then made in the background (libnats
    /// retries for ever) and calls fail until it is up (`isConnected`).
    ///
    /// - Throws: `Failure` for settings libnats refuses (an unreadable credentials or CA file, a malformed URL).
    init(settings: Settings) throws {
        var options: OpaquePointer?
        try Self.check("natsOptions_Create", natsOptions_Create(&options))
        defer { natsOptions_Destroy(options) }
        try Self.check("natsOptions_SetURL", natsOptions_SetURL(options, settings.url))
        try Self.check("natsOptions_SetName", natsOptions_SetName(options, settings.name))
        try Self.check("natsOptions_SetMaxReconnect", natsOptions_SetMaxReconnect(options, -1))
        try Self.check("natsOptions_SetReconnectWait", natsOptions_SetReconnectWait(options, 250))
        try Self.check("natsOptions_SetReconnectBufSize", natsOptions_SetReconnectBufSize(options, 8 * 1024 * 1024))
        // With a connected callback, a connect that fails returns at once and goes on in the background; without
        // one, `natsConnection_Connect` would block until it connects (for ever, with no reconnect limit).
        try Self.check(
            "natsOptions_SetRetryOnFailedConnect",
            natsOptions_SetRetryOnFailedConnect(options, true, { _, _ in }, nil))
        try Self.check(
            "natsOptions_SetReconnectedCB",
            natsOptions_SetReconnectedCB(options, { _, _ in _ = JetStream.reconnects.add(1, ordering: .relaxed) }, nil))
        if let file = settings.credentialsFile {
            try Self.check(
                "natsOptions_SetUserCredentialsFromFiles", natsOptions_SetUserCredentialsFromFiles(options, file, nil))
        }
        if let file = settings.certificateAuthorityFile {
            try Self.check(
                "natsOptions_LoadCATrustedCertificates", natsOptions_LoadCATrustedCertificates(options, file))
            try Self.check("natsOptions_SetSecure", natsOptions_SetSecure(options, true))
        }
        var connection: OpaquePointer?
        let status = natsConnection_Connect(&connection, options)
        // With retry on a failed connect, NATS_NOT_YET_CONNECTED means "connecting in the background".
        guard status == NATS_OK || status == NATS_NOT_YET_CONNECTED, let connection else {
            throw Failure(operation: "connect", status: status, jetStreamCode: jsErrCode(0))
        }
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = 5_000
        var context: OpaquePointer?
        let jsStatus = natsConnection_JetStream(&context, connection, &jsOptions)
        guard jsStatus == NATS_OK, let context else {
            natsConnection_Destroy(connection)
            throw Failure(operation: "natsConnection_JetStream", status: jsStatus, jetStreamCode: jsErrCode(0))
        }
        self.connection = connection
        self.context = context
    }

    private static func check(_ operation: String, _ status: natsStatus) throws {
        guard status == NATS_OK else {
            throw Failure(operation: operation, status: status, jetStreamCode: jsErrCode(0))
        }
    }

    /// Whether the connection is up now.
    var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    /// Closes the connection; no call may be made after (or during) this.
    func close() {
        jsCtx_Destroy(context)
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }

    // MARK: - Streams

    /// What a stream is made with.
    struct StreamSettings: Sendable {
        var name: String
        var subjects: [String]
        var replicas: Int
        /// How long JetStream remembers a message ID to drop a second publication of it.
        var duplicateWindow: Duration
        /// A work queue: a message is removed once a consumer acknowledged it.
        var isWorkQueue = false
        /// Messages older than this are dropped; `nil`: no limit.
        var maxAge: Duration?
        /// The stream keeps at most this many messages, dropping the oldest; `nil`: no limit.
        var maxMessages: Int64?
    }

    /// Creates the stream if it does not exist (an existing one is kept as it is).
    ///
    /// - Throws: `Failure` when it cannot, at once while the connection is down (the request would otherwise wait
    ///   in the reconnect buffer until its timeout).
    func ensureStream(_ settings: StreamSettings) throws {
        guard isConnected else {
            throw Failure(
                operation: "create stream \(settings.name)", status: NATS_NOT_YET_CONNECTED,
                jetStreamCode: jsErrCode(0))
        }
        var code = jsErrCode(0)
        var info: UnsafeMutablePointer<jsStreamInfo>?
        // Looked up first: a gateway whose NATS user may not create streams (deploy/nats) uses one made for it.
        if js_GetStreamInfo(&info, context, settings.name, nil, &code) == NATS_OK {
            if let info { jsStreamInfo_Destroy(info) }
            return
        }
        info = nil
        code = jsErrCode(0)
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        let cSubjects = settings.subjects.map { strdup($0) }
        defer { for subject in cSubjects { free(subject) } }
        let status = settings.name.withCString { cName -> natsStatus in
            config.Name = cName
            config.Storage = js_FileStorage
            config.Replicas = Int64(settings.replicas)
            config.Retention = settings.isWorkQueue ? js_WorkQueuePolicy : js_LimitsPolicy
            config.Duplicates = Self.nanoseconds(settings.duplicateWindow)
            if let maxAge = settings.maxAge { config.MaxAge = Self.nanoseconds(maxAge) }
            if let maxMessages = settings.maxMessages { config.MaxMsgs = maxMessages }
            return cSubjects.map { UnsafePointer($0) }.withUnsafeBufferPointer { buffer -> natsStatus in
                var pointers = Array(buffer)
                return pointers.withUnsafeMutableBufferPointer { mutable -> natsStatus in
                    config.Subjects = UnsafeMutablePointer(mutating: mutable.baseAddress)
                        .map { UnsafeMutablePointer<UnsafePointer<CChar>?>(OpaquePointer($0)) }
                    config.SubjectsLen = Int32(mutable.count)
                    return js_AddStream(&info, context, &config, nil, &code)
                }
            }
        }
        if let info { jsStreamInfo_Destroy(info) }
        guard status == NATS_OK || code == JSStreamNameExistErr else {
            throw Failure(operation: "create stream \(settings.name)", status: status, jetStreamCode: code)
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
    }

    // MARK: - Publishing

    struct PublishAck: Sendable {
        var sequence: UInt64
        var isDuplicate: Bool
    }

    /// Publishes `data` on `subject` with the message ID `messageID` and waits for JetStream's ack.
    func publish(
        subject: String, data: [UInt8], messageID: String, stream: String, timeoutMilliseconds: Int64 = 5_000
    )
        throws -> PublishAck
    {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = timeoutMilliseconds
        var code = jsErrCode(0)
        var ack: UnsafeMutablePointer<jsPubAck>?
        let status = messageID.withCString { cID in
            stream.withCString { cStream in
                options.MsgId = cID
                options.ExpectStream = cStream
                return data.withUnsafeBytes { bytes in
                    js_Publish(&ack, context, subject, bytes.baseAddress, Int32(bytes.count), &options, &code)
                }
            }
        }
        defer { if let ack { jsPubAck_Destroy(ack) } }
        guard status == NATS_OK, let ack else {
            throw Failure(operation: "publish \(messageID) on \(subject)", status: status, jetStreamCode: code)
        }
        return PublishAck(sequence: ack.pointee.Sequence, isDuplicate: ack.pointee.Duplicate)
    }

    /// Publishes a plain NATS message (a reply to a request, not stored).
    func publishCore(subject: String, data: [UInt8]) throws {
        let status = data.withUnsafeBytes { bytes in
            natsConnection_Publish(connection, subject, bytes.baseAddress, Int32(bytes.count))
        }
        try Self.check("publish on \(subject)", status)
        _ = natsConnection_FlushTimeout(connection, 2_000)
    }

    /// Acknowledges a message of a consumer with explicit acks (`queueReader`): JetStream removes it from a work
    /// queue and never delivers it again.
    func acknowledge(_ message: StreamMessage) throws {
        guard let ackSubject = message.reply else { return }
        try publishCore(subject: ackSubject, data: Array("+ACK".utf8))
    }

    /// A new unique subject to receive replies on (`_INBOX.…`).
    func newInbox() throws -> String {
        var inbox: UnsafeMutablePointer<natsInbox>?
        try Self.check("natsInbox_Create", natsInbox_Create(&inbox))
        defer { natsInbox_Destroy(inbox) }
        return String(cString: inbox!)
    }

    // MARK: - Consuming

    /// A reader of the messages of `subject` from stream sequence `startSequence` (1: the beginning) on.
    func reader(of subject: String, from startSequence: UInt64) throws -> StreamReader {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Config.AckPolicy = js_AckNone
        options.Config.InactiveThreshold = 30 * 1_000_000_000
        if startSequence > 1 {
            options.Config.DeliverPolicy = js_DeliverByStartSequence
            options.Config.OptStartSeq = startSequence
        } else {
            options.Config.DeliverPolicy = js_DeliverAll
        }
        var code = jsErrCode(0)
        var subscription: OpaquePointer?
        let status = js_PullSubscribe(&subscription, context, subject, nil, nil, &options, &code)
        guard status == NATS_OK, let subscription else {
            throw Failure(operation: "read \(subject) from \(startSequence)", status: status, jetStreamCode: code)
        }
        return StreamReader(handle: subscription)
    }

    /// A reader of `subject` through the durable consumer `durable` with explicit acks (`acknowledge`): what it
    /// delivered and nobody acknowledged within a minute is delivered again, to it or its successor.
    func queueReader(of subject: String, durable: String) throws -> StreamReader {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        options.Config.AckPolicy = js_AckExplicit
        options.Config.AckWait = 60 * 1_000_000_000
        var code = jsErrCode(0)
        var subscription: OpaquePointer?
        let status = js_PullSubscribe(&subscription, context, subject, durable, nil, &options, &code)
        guard status == NATS_OK, let subscription else {
            throw Failure(operation: "read \(subject) as \(durable)", status: status, jetStreamCode: code)
        }
        return StreamReader(handle: subscription, isDurable: true)
    }

    /// A plain (not JetStream) subscription, for replies and requests.
    func subscribeCore(subject: String) throws -> JetStreamSubscription {
        var subscription: OpaquePointer?
        try Self.check("subscribe to \(subject)", natsConnection_SubscribeSync(&subscription, connection, subject))
        return JetStreamSubscription(handle: subscription!)
    }

    static func payload(of message: OpaquePointer) -> [UInt8] {
        let length = Int(natsMsg_GetDataLength(message))
        guard length > 0, let data = natsMsg_GetData(message) else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}

/// A subscription's handle, used by one thread.
final class JetStreamSubscription: @unchecked Sendable {
    // @unchecked Sendable: used by the one thread that made it, then destroyed by it (`close`).
    private let handle: OpaquePointer

    init(handle: OpaquePointer) { self.handle = handle }

    /// The next message, or `nil` when none arrived within `timeoutMilliseconds`.
    func next(timeoutMilliseconds: Int64) throws -> StreamMessage? {
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, handle, timeoutMilliseconds)
        if status == NATS_TIMEOUT { return nil }
        guard status == NATS_OK, let message else {
            throw JetStream.Failure(operation: "next message", status: status, jetStreamCode: jsErrCode(0))
        }
        defer { natsMsg_Destroy(message) }
        return StreamMessage(message)
    }

    func close() {
        natsSubscription_Unsubscribe(handle)
        natsSubscription_Destroy(handle)
    }
}
