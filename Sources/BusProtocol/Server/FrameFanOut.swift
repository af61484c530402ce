import ContextBusSupport
import ContextBusTransport

/// Sends one `NumberedFrame` to many bus connections, each with its own number, from the connections' own loops.
///
/// ```
///  producer ──send(frame, to: recipients)──┬─▶ loop 0's mailbox ──one task──▶ queue each frame, one send per connection
///   (any thread, never a system call)      └─▶ loop 1's mailbox ──one task──▶ …
/// ```
///
/// The producer only groups: per loop it appends the frame and that loop's recipients to the loop's mailbox and,
/// when the mailbox was empty, hands the loop one task. The loop takes everything its mailbox holds, appends each
/// frame for each recipient to the connection's outbound queue (no copy of the frame per recipient beyond that
/// queue), and then makes one `send` per connection for all of it: a connection whose loop fell behind by several
/// frames gets them in one system call and one wake-up. The sending is spread over the loops and their threads.
///
/// Per connection the frames go out in the order `send` was called, after everything written to it before the
/// call, with the connection's outbound limit and overflow (`bus.overflow`, then dropped) as for any write; a
/// connection that is slow or gone never holds up the others. Recipients whose frame was refused (closed, dropped
/// for overflow, or larger than the server's `maxFrame`, which is reported to `onHandlerError`) are passed to
/// `onRefused`, on a loop thread, once per loop turn.
package final class FrameFanOut: Sendable {
    /// A connection and the number spliced into its frame.
    package struct Recipient: Sendable {
        package let connection: BusConnection
        package let number: Int64

        package init(connection: BusConnection, number: Int64) {
            self.connection = connection
            self.number = number
        }
    }

    /// Recipients grouped by their connection's loop, in their given order within each loop; build once and reuse
    /// for every frame that goes to the same recipients.
    package struct Recipients: Sendable {
        let byLoop: [(loop: EventLoop, recipients: [Recipient])]

        /// Groups `recipients` by loop.
        package init(_ recipients: [Recipient]) {
            var byLoop: [(loop: EventLoop, recipients: [Recipient])] = []
            for recipient in recipients {
                let loop = recipient.connection.socket.loop
                if let index = byLoop.firstIndex(where: { $0.loop === loop }) {
                    byLoop[index].recipients.append(recipient)
                } else {
                    byLoop.append((loop, [recipient]))
                }
            }
            self.byLoop = byLoop
        }

        /// The number of recipients.
        package var count: Int { byLoop.reduce(0) { $0 + $1.recipients.count } }
    }

    private let method: String
    private let onRefused: @Sendable ([Recipient]) -> Void
    private let mailboxes = Locked<[ObjectIdentifier: LoopMailbox]>([:])

    /// - Parameters:
    ///   - method: The frames' method, for the report of a frame larger than `maxFrame`.
    ///   - onRefused: Told (on a loop thread, never under a lock) which recipients' frames were refused.
    package init(method: String, onRefused: @escaping @Sendable ([Recipient]) -> Void) {
        self.method = method
        self.onRefused = onRefused
    }

    /// Queues `frame` for every recipient; returns at once, without a system call unless a loop must be woken.
    package func send(_ frame: NumberedFrame, to recipients: Recipients) {
        for (loop, group) in recipients.byLoop {
            let mailbox = mailboxes.withLock { mailboxes in
                if let mailbox = mailboxes[ObjectIdentifier(loop)] { return mailbox }
                let mailbox = LoopMailbox(loop: loop)
                mailboxes[ObjectIdentifier(loop)] = mailbox
                return mailbox
            }
            if !mailbox.post(frame, to: group, fanOut: self) { onRefused(group) }
        }
    }

    /// On the loop: queues every posted frame for its recipients, then sends each touched connection's queue once.
    fileprivate func deliver(_ batches: [(NumberedFrame, [Recipient])]) {
        var touched: [SocketConnection] = []
        var seen: Set<ObjectIdentifier> = []
        var refused: [Recipient] = []
        for (frame, recipients) in batches {
            for recipient in recipients {
                let connection = recipient.connection
                let length = frame.payloadLength(for: recipient.number)
                guard connection.isFramed(payloadLength: length, method: method) else {
                    refused.append(recipient)
                    continue
                }
                let isQueued = connection.socket.queueWithoutSending(byteCount: Frame.headerLength + length) {
                    frame.append(for: recipient.number, into: &$0)
                }
                if isQueued {
                    if seen.insert(ObjectIdentifier(connection.socket)).inserted { touched.append(connection.socket) }
                } else {
                    connection.countRefusedMessage()
                    refused.append(recipient)
                }
            }
        }
        for socket in touched { socket.flush() }
        if !refused.isEmpty { onRefused(refused) }
    }
}

/// What a `FrameFanOut` has posted to one loop and the loop has not taken yet.
private final class LoopMailbox: Sendable {
    let loop: EventLoop
    private let pending = Locked(Pending())

    private struct Pending {
        var batches: [(NumberedFrame, [FrameFanOut.Recipient])] = []
        var isScheduled = false
    }

    init(loop: EventLoop) {
        self.loop = loop
    }

    /// Adds a batch; hands the loop a task to take it unless one is already on its way.
    ///
    /// - Returns: `false` when the loop has stopped (its connections are closed).
    func post(_ frame: NumberedFrame, to recipients: [FrameFanOut.Recipient], fanOut: FrameFanOut) -> Bool {
        let mustSchedule = pending.withLock { pending -> Bool in
            pending.batches.append((frame, recipients))
            guard !pending.isScheduled else { return false }
            pending.isScheduled = true
            return true
        }
        guard mustSchedule else { return true }
        let isAccepted = loop.submit { [self] in
            let batches = pending.withLock { pending in
                pending.isScheduled = false
                defer { pending.batches.removeAll(keepingCapacity: true) }
                return pending.batches
            }
            fanOut.deliver(batches)
        }
        if !isAccepted {
            pending.withLock { pending in
                pending.isScheduled = false
                pending.batches.removeAll()
            }
        }
        return isAccepted
    }
}
