import ContextBusSupport
import Dispatch
import Foundation
import Synchronization

/// A connection to a D-Bus message bus (or a peer), speaking the wire protocol natively over a Unix socket.
///
/// ```
///                 ┌─────────── reader thread (one per connection) ───────────┐
///  socket ──recv──▶ DBusMessageReader ─▶ reply?  ─▶ pending call by serial   │
///                 │                      signal? ─▶ owner tracking, matching │
///                 └──────────────┬───────────────────────────────────────────┘
///                                ▼ in arrival order
///                 delivery queue (serial): call completions, signal handlers, owner changes
///  callers ──encode──▶ write lock ──send──▶ socket
/// ```
///
/// One reader thread reads every message; writers send under a lock. Replies are matched to calls by serial, and
/// each call has our own timeout (the wire has none); a reply that comes after its call timed out or was
/// cancelled is dropped. Completions, signal handlers and owner-change handlers run one at a time on a serial
/// delivery queue, in the order their messages arrived: a signal that arrives before a reply is delivered before
/// that reply completes its call. Handlers must not block that queue.
///
/// When the socket closes, or the peer breaks the protocol, every pending call fails with
/// `DBusConnectionError.disconnected` (or `.protocolViolation`) and so does every later call. The reader thread
/// keeps the connection alive until then: call `close()` when done.
package final class DBusConnection: Sendable {
    /// The well-known name and unique name of the bus itself.
    package static let busName = "org.freedesktop.DBus"
    package static let busPath = DBusObjectPath.makeBusPath()

    /// The GUID the server sent during authentication.
    package let serverGUID: String
    package let socket: DBusSocket
    package let deliveryQueue = DispatchQueue(label: "devicesvc.dbus.delivery")
    /// The calls' timeouts, on one dispatch timer (a call's reply cancels its timeout).
    package let callTimeouts = DispatchDeadlines(queue: .global())
    package let state = Locked(State())
    /// `true` while writers may use the socket; a writer holds it for the whole `send`.
    package let writeLock = Locked(true)
    /// `true` while the descriptor is open; guards `shutdown` against a closed (and maybe reused) descriptor.
    package let descriptorLock = Locked(true)
    package let serialCounter = Atomic<UInt32>(0)

    /// The state that the reader, writers, timers and callers share.
    package struct State {
        var closeReason: DBusConnectionError?
        var uniqueName: String?
        var pendingCalls: [UInt32: PendingCall] = [:]
        var subscriptions: [UInt64: Subscription] = [:]
        var ownerTracks: [String: OwnerTrack] = [:]
        var disconnectHandlers: [UInt64: @Sendable (DBusConnectionError) -> Void] = [:]
        var nextToken: UInt64 = 1

        mutating func makeToken() -> UInt64 {
            defer { nextToken += 1 }
            return nextToken
        }
    }

    /// A call waiting for its reply.
    package struct PendingCall: Sendable {
        let member: String
        /// Fails the call when its timeout passes; cancelled when the call completes first.
        var timeout: DispatchDeadlines.Timer?
        /// Internal calls (name-owner seeding) complete on the reader thread, in order with the messages around
        /// their reply; user calls complete on the delivery queue.
        let completesOnReader: Bool
        let completion: @Sendable (Result<DBusMessage, any Error>) -> Void
    }

    /// A signal subscriber.
    package struct Subscription: Sendable {
        let rule: DBusMatchRule
        let handler: @Sendable (DBusMessage) -> Void
    }

    /// The known owner of a well-known name, kept current from `NameOwnerChanged` on the reader thread.
    package struct OwnerTrack: Sendable {
        var owner: String?
        var users = 0
        var observers: [UInt64: @Sendable (String?) -> Void] = [:]
    }

    package init(socket: DBusSocket, serverGUID: String, initialBytes: [UInt8]) {
        self.socket = socket
        self.serverGUID = serverGUID
        let thread = Thread { [self] in readLoop(initialBytes: initialBytes) }
        thread.name = "devicesvc.dbus.reader"
        thread.start()
    }

    // MARK: - Connecting

    /// Connects, authenticates and says `Hello` to the bus at `address`.
    ///
    /// Each `;`-separated address is tried in order until one connects and authenticates.
    ///
    /// - Parameters:
    ///   - address: a D-Bus address string, such as `unix:path=/run/dbus/system_bus_socket`.
    ///   - timeout: the limit for authenticating and for the `Hello` reply.
    /// - Throws: `DBusConnectionError` naming the last failure; `DBusError` when the bus refuses `Hello`.
    package static func connect(to address: String, timeout: Duration = .seconds(10)) async throws -> DBusConnection {
        let connection = try await connectWithoutHello(to: address, timeout: timeout)
        do {
            let reply = try await connection.call(
                destination: busName, path: busPath, interface: busName, member: "Hello", timeout: timeout)
            guard case .string(let name)? = reply.body.first else {
                throw DBusConnectionError.unexpectedSignature(
                    member: "Hello", expected: "s", actual: reply.bodySignature)
            }
            connection.state.withLock { $0.uniqueName = name }
            return connection
        } catch {
            connection.close()
            throw error
        }
    }

    /// Connects to the system bus: `DBUS_SYSTEM_BUS_ADDRESS` or `/run/dbus/system_bus_socket`.
    package static func connectToSystemBus(timeout: Duration = .seconds(10)) async throws -> DBusConnection {
        try await connect(to: DBusAddress.systemBus(environment: ProcessInfo.processInfo.environment), timeout: timeout)
    }

    /// Connects and authenticates without `Hello`: for a peer-to-peer connection, or to test the bus's handling.
    package static func connectWithoutHello(
        to address: String, timeout: Duration = .seconds(10)
    ) async throws
        -> DBusConnection
    {
        let addresses = try DBusAddress.parseList(address)
        return try await withLockedThrowingContinuation { continuation in
            // Connecting and the handshake block; keep them off the cooperative pool.
            DispatchQueue.global().async {
                var lastError = DBusConnectionError.invalidAddress(address, reason: "no address tried")
                for candidate in addresses {
                    do throws(DBusConnectionError) {
                        let socket = try DBusSocket.connect(to: candidate)
                        do throws(DBusConnectionError) {
                            let authenticator = DBusAuthenticator(userID: DBusSocket.effectiveUserID)
                            let (guid, leftover) = try authenticator.run(on: socket, timeout: timeout)
                            continuation.resume(
                                returning: DBusConnection(socket: socket, serverGUID: guid, initialBytes: leftover))
                            return
                        } catch {
                            socket.close()
                            throw error
                        }
                    } catch {
                        lastError = error
                    }
                }
                continuation.resume(throwing: lastError)
            }
        }
    }

    /// The unique name the bus gave this connection in reply to `Hello`, such as `:1.42`; empty without `Hello`.
    package var uniqueName: String { state.withLock { $0.uniqueName ?? "" } }

    /// Whether the connection is still open.
    package var isConnected: Bool { state.withLock { $0.closeReason == nil } }

    // MARK: - Closing

    /// Closes the connection. Pending calls fail with `DBusConnectionError.disconnected`. Idempotent.
    package func close() {
        let wasOpen = state.withLock { state -> Bool in
            guard state.closeReason == nil else { return false }
            state.closeReason = .disconnected(reason: "closed by this process")
            return true
        }
        guard wasOpen else { return }
        // The reader wakes with end of file and tears down.
        descriptorLock.withLock { isOpen in if isOpen { socket.shutdown() } }
    }

    /// Registers a handler called once, on the delivery queue, when the connection closes for any reason.
    ///
    /// A handler registered after the close is called at once (on the delivery queue).
    ///
    /// - Returns: a token for `removeDisconnectHandler(_:)`.
    @discardableResult
    package func onDisconnect(_ handler: @escaping @Sendable (DBusConnectionError) -> Void) -> UInt64 {
        let (token, reason) = state.withLock { state -> (UInt64, DBusConnectionError?) in
            let token = state.makeToken()
            guard state.closeReason == nil else { return (token, state.closeReason) }
            state.disconnectHandlers[token] = handler
            return (token, nil)
        }
        if let reason { deliveryQueue.async { handler(reason) } }
        return token
    }

    /// Removes a handler registered with `onDisconnect(_:)`; it will not be called.
    package func removeDisconnectHandler(_ token: UInt64) {
        _ = state.withLock { $0.disconnectHandlers.removeValue(forKey: token) }
    }

    // MARK: - Reading

    private func readLoop(initialBytes: [UInt8]) {
        var reader = DBusMessageReader()
        reader.append(initialBytes)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var failure: DBusConnectionError
        while true {
            do {
                while let message = try reader.nextMessage() { handle(message) }
            } catch {
                failure = .protocolViolation(error)
                break
            }
            do {
                let count = try socket.receive(into: &buffer)
                guard count > 0 else {
                    failure = .disconnected(reason: "the peer closed the connection")
                    break
                }
                reader.append(buffer[0..<count])
            } catch {
                failure = error
                break
            }
        }
        tearDown(failure)
    }

    /// Fails everything pending and releases the socket, once, on the reader thread.
    private func tearDown(_ failure: DBusConnectionError) {
        let (reason, calls, handlers) = state.withLock {
            state -> (DBusConnectionError, [PendingCall], [@Sendable (DBusConnectionError) -> Void]) in
            if state.closeReason == nil { state.closeReason = failure }
            let calls = state.pendingCalls.sorted { $0.key < $1.key }.map(\.value)
            let handlers = state.disconnectHandlers.sorted { $0.key < $1.key }.map(\.value)
            state.pendingCalls = [:]
            state.subscriptions = [:]
            state.ownerTracks = [:]
            state.disconnectHandlers = [:]
            return (state.closeReason ?? failure, calls, handlers)
        }
        // Unblock any writer, wait for it to leave, then release the descriptor.
        descriptorLock.withLock { isOpen in if isOpen { socket.shutdown() } }
        writeLock.withLock { isWritable in isWritable = false }
        descriptorLock.withLock { isOpen in
            isOpen = false
            socket.close()
        }
        for call in calls { complete(call, with: .failure(reason)) }
        deliveryQueue.async {
            for handler in handlers { handler(reason) }
        }
    }

    /// Routes one incoming message; runs on the reader thread.
    private func handle(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            guard let serial = message.replySerial,
                let call = state.withLock({ $0.pendingCalls.removeValue(forKey: serial) })
            else { return }  // a late reply to a call that timed out or was cancelled: dropped
            complete(call, with: message.kind == .error ? .failure(DBusError(reply: message)) : .success(message))
        case .signal:
            dispatchSignal(message)
        case .methodCall:
            answerIncomingCall(message)
        }
    }

    /// Runs a call's completion where it belongs.
    package func complete(_ call: PendingCall, with result: Result<DBusMessage, any Error>) {
        call.timeout?.dispose()
        if call.completesOnReader {
            call.completion(result)
        } else {
            let completion = call.completion
            deliveryQueue.async { completion(result) }
        }
    }

    /// This connection exports no objects: it answers `Peer.Ping` and refuses every other call.
    private func answerIncomingCall(_ call: DBusMessage) {
        guard !call.flags.contains(.noReplyExpected) else { return }
        let reply: DBusMessage
        if call.interface == "org.freedesktop.DBus.Peer" && call.member == "Ping" {
            reply = .methodReturn(to: call)
        } else {
            reply = .errorReply(
                to: call, name: DBusError.unknownMethod,
                message: "No method \(call.interface ?? "").\(call.member ?? "") on \(call.path?.rawValue ?? "")")
        }
        _ = try? send(reply)
    }
}

extension DBusObjectPath {
    fileprivate static func makeBusPath() -> DBusObjectPath {
        // A literal that is valid by inspection.
        try! DBusObjectPath("/org/freedesktop/DBus")
    }
}
