import ContextBusObjectGraph
import ContextBusSupport
import ContextBusTransport
import ContextBusWire
import Dispatch

extension BusServer {
    /// What a `BusServer` serves, where, and with which limits.
    ///
    /// ```swift
    /// var configuration = BusServer.Configuration(name: "storesvc", version: "0.1.0", socketPath: path)
    /// configuration.maxInFlight = 256
    /// let server = BusServer(configuration: configuration)
    /// ```
    package struct Configuration: Sendable {
        /// The service's name in the `bus.hello` result (`storesvc`, `devicesvc`).
        package var name: String
        /// The service's software version in the `bus.hello` result.
        package var version: String
        /// The socket path (`--socket PATH`).
        package var socketPath: String
        /// Mode of the socket file (default `0660`).
        package var socketMode: UInt32 = 0o660
        /// Largest frame payload accepted from a client and sent to it (default 16 MiB, `--max-frame`).
        package var maxFrame: Int = Frame.defaultMaximumLength
        /// Frames whose payload is at least this large (default 64 KiB) are parsed off the connection's loop, so
        /// that a large request (up to `maxFrame`) does not hold the loop's other connections for its parse; the
        /// connection reads nothing meanwhile, so its requests keep their order. Smaller frames are parsed on the
        /// loop, where a hand-off would cost more than the parse.
        package var largeFrameThreshold: Int = 64 * 1024
        /// Called on the parsing thread before a large frame is parsed off the loop, with its length (tests: a parse
        /// that takes as long as the test wants).
        package var largeFrameParseHook: (@Sendable (Int) -> Void)?
        /// Requests that may be in flight on one connection before `429` (default 1024).
        package var maxInFlight: Int = 1024
        /// Bytes one connection's outbound queue may hold before the connection is dropped with `bus.overflow`
        /// (default 8 MiB, `--max-outbound`).
        package var maxOutbound: Int = 8 * 1024 * 1024
        /// Whose connections are served; others get `403` and are closed (default: this process's user, and
        /// root).
        package var access: AccessPolicy = .ownerAndRoot
        /// The loops that accept and serve connections; `nil` makes a group that the server owns and shuts
        /// down with itself.
        package var eventLoopGroup: EventLoopGroup?
        /// Where responder-style handlers run; `nil` makes a concurrent queue. Handlers may block on it.
        package var handlerQueue: DispatchQueue?
        /// The model params are read with (`ModelJSONConvertible` params such as `store.save`'s); `nil` for a
        /// service without a store model, whose methods' params then need none.
        package var model: Model?
        /// Asked for every request of a registered method before its params are read: an error to answer instead
        /// of running the handler (storesvc refuses a request made for another model: `ModelVersionPrecondition`).
        package var requestPrecondition: (@Sendable (_ method: String, _ params: JSONValue?) -> RPCError?)?
        /// Where to look for a socket inherited from systemd; `nil` always binds `socketPath`.
        package var socketActivation: SocketActivation? = .processEnvironment
        /// A connection that has not completed `bus.hello` by then is closed; `nil` waits forever.
        package var helloTimeout: Duration? = .seconds(10)
        /// How long the best-effort `bus.overflow` goodbye may wait for a slow peer before the connection is
        /// closed regardless.
        package var overflowGoodbyeTimeout: Duration = .seconds(1)
        /// A paced send (`BusConnection.sendPaced`, `whenWritable`) waits while the outbound queue holds this
        /// many bytes or more; `nil` means a quarter of `maxOutbound`.
        package var pacingThreshold: Int?
        /// Told about handler errors that are answered with a bare `-32603` (the client never sees their
        /// details), and about handlers that finished without answering; for logging.
        package var onHandlerError: (@Sendable (_ method: String, _ error: any Error) -> Void)?

        /// A configuration with the protocol's default limits.
        ///
        /// - Parameters:
        ///   - name: The service's name (`storesvc`, `devicesvc`).
        ///   - version: The service's software version.
        ///   - socketPath: Where to listen.
        package init(name: String, version: String, socketPath: String) {
            self.name = name
            self.version = version
            self.socketPath = socketPath
        }

        /// The pacing threshold in effect.
        var effectivePacingThreshold: Int {
            max(1, pacingThreshold ?? maxOutbound / 4)
        }
    }

    /// Which peers may use the server, by the credentials the kernel reports for them (`SO_PEERCRED`).
    ///
    /// A peer is allowed when its user id or its group id is listed, or when the policy allows everyone.
    package struct AccessPolicy: Sendable, Hashable, CustomStringConvertible {
        /// User ids that may connect.
        package var allowedUserIDs: Set<UInt32>
        /// Group ids that may connect (the peer's primary group, as `SO_PEERCRED` reports it).
        package var allowedGroupIDs: Set<UInt32>
        /// Whether every peer is allowed (the socket file's mode is then the only gate).
        package var allowsEveryone: Bool

        package init(allowedUserIDs: Set<UInt32>, allowedGroupIDs: Set<UInt32> = [], allowsEveryone: Bool = false) {
            self.allowedUserIDs = allowedUserIDs
            self.allowedGroupIDs = allowedGroupIDs
            self.allowsEveryone = allowsEveryone
        }

        /// This process's effective user, and root.
        package static var ownerAndRoot: AccessPolicy {
            AccessPolicy(allowedUserIDs: [Syscall.effectiveUserID, 0])
        }

        /// Every peer that can open the socket.
        package static var everyone: AccessPolicy {
            AccessPolicy(allowedUserIDs: [], allowsEveryone: true)
        }

        /// Whether `peer` may use the server.
        package func allows(_ peer: PeerCredentials) -> Bool {
            allowsEveryone || allowedUserIDs.contains(peer.uid) || allowedGroupIDs.contains(peer.gid)
        }

        package var description: String {
            if allowsEveryone { return "everyone" }
            return "uids \(allowedUserIDs.sorted()), gids \(allowedGroupIDs.sorted())"
        }
    }
}
