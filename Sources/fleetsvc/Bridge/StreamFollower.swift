import ContextBusServer
import ContextBusSupport

/// Hands out the fleet's stream in sequence order from a position, each message once, through `StreamReader`s it
/// makes and replaces as needed. Used by the inbound's thread only.
///
/// A reader is replaced by a new one from the position reached when it fails (the server restarted and lost its
/// consumer, the connection broke), when it skips a sequence, and when it stops short of messages it said were
/// there (`pending`): a pull consumer without acks loses the messages the server sent to a fetch that had already
/// given up. The stream's sequences are contiguous (the fleet's stream holds only `ctxbus.<fleet>.*.txn`), so a
/// skipped one means exactly that; a sequence still missing from a new reader is no longer in the stream (its
/// limits dropped it) and is passed over.
final class StreamFollower {
    private let jetStream: JetStream
    private let subject: String
    private let log: ServiceLog
    private var reader: StreamReader?
    /// The last sequence handed out.
    private(set) var position: Int64
    /// Messages the stream held after the last one handed out, as that message said.
    private(set) var pending: Int64 = 0
    /// The position from which a new reader was made because of a skip (a skip seen again there is real).
    private var recheckedSkip: Int64 = -1

    init(jetStream: JetStream, subject: String, position: Int64, log: ServiceLog) {
        self.jetStream = jetStream
        self.subject = subject
        self.position = position
        self.log = log
    }

    /// Whether a reader is open now (`fleet.status`' `following`).
    var isReading: Bool { reader != nil }

    /// The messages after `position`, in order, up to `batch`; `[]` when none came within `timeoutMilliseconds`
    /// (or no reader could be made: JetStream is away).
    func next(batch: Int, timeoutMilliseconds: Int64) -> [StreamMessage] {
        guard let current = reader ?? makeReader() else { return [] }
        let messages: [StreamMessage]
        do {
            messages = try current.fetch(batch: batch, timeoutMilliseconds: timeoutMilliseconds)
        } catch {
            log.debug("inbound: reading the stream after \(position): \(error)")
            replaceReader()
            CurrentThread.sleep(nanoseconds: Int64(100) * 1_000_000)
            return []
        }
        if messages.isEmpty {
            if pending > 0 {
                log.debug("inbound: the stream's reader stopped short of \(pending) message(s) after \(position)")
                pending = 0
                replaceReader()
            }
            return []
        }
        var handedOut: [StreamMessage] = []
        for message in messages {
            let sequence = Int64(message.sequence)
            if sequence <= position { continue }
            if sequence > position + 1, recheckedSkip != position {
                log.debug("inbound: the stream's reader skipped from \(position) to \(sequence); reading again")
                recheckedSkip = position
                replaceReader()
                break
            }
            position = sequence
            pending = Int64(message.pending)
            handedOut.append(message)
        }
        return handedOut
    }

    /// Reads again from after `position` (0: the stream's start).
    func restart(from position: Int64) {
        self.position = position
        pending = 0
        replaceReader()
    }

    func close() {
        reader?.close()
        reader = nil
    }

    private func replaceReader() {
        reader?.close()
        reader = nil
    }

    private func makeReader() -> StreamReader? {
        do {
            let made = try jetStream.reader(of: subject, from: UInt64(position + 1))
            reader = made
            return made
        } catch {
            log.debug("inbound: reading the stream from \(position + 1): \(error)")
            CurrentThread.sleep(nanoseconds: Int64(250) * 1_000_000)
            return nil
        }
    }
}

@available(*, unavailable)
extension StreamFollower: Sendable {}
