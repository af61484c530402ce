/// A service's socket, access and limit flags, as storesvc has always taken them and devicesvc now does
/// (PROTOCOL.md, "Devices that push"): `--socket-mode`, `--allow-uid`, `--allow-gid`, `--max-frame`,
/// `--max-in-flight`, `--max-outbound`.
package struct ServerAccessOptions: Sendable, Equatable {
    /// The mode of the socket file (ignored under socket activation).
    package var socketMode: UInt32 = 0o660
    /// Peers with one of these uids may connect, besides the service's own uid and root.
    package var allowedUIDs: [UInt32] = []
    /// Peers with one of these primary gids may connect.
    package var allowedGIDs: [UInt32] = []
    /// The largest frame accepted, in bytes.
    package var maxFrame: Int = 16 * 1024 * 1024
    /// Requests one connection may have in flight before `429`.
    package var maxInFlight: Int = 1024
    /// The bound of each connection's outbound queue, in bytes.
    package var maxOutbound: Int = 8 * 1024 * 1024

    package init() {}

    /// The `--help` lines of these flags.
    package static let usage = """
          --socket-mode MODE   Mode of the socket file, octal (default 0660; ignored under socket activation).
          --allow-uid UID      Also allow peers with this uid (repeatable). The service's own uid and root are
                               always allowed.
          --allow-gid GID      Also allow peers with this primary gid (repeatable).
          --max-frame N        Largest frame accepted, in bytes (default 16777216).
          --max-in-flight N    Requests in flight per connection before 429 (default 1024).
          --max-outbound N     Outbound queue bound per connection, in bytes (default 8388608); a connection
                               that overflows it gets bus.overflow and is dropped.
        """

    /// Reads `flag` if it is one of these, taking its value from `flags`.
    ///
    /// - Returns: `false` when `flag` is not one of these.
    /// - Throws: `ConfigurationError` for a bad value.
    package mutating func read(_ flag: String, from flags: inout FlagReader) throws(ConfigurationError) -> Bool {
        switch flag {
        case "--socket-mode": socketMode = try flags.octalMode()
        case "--allow-uid":
            let uid = try UInt32(flags.integer(in: 0...Int(UInt32.max)))
            if !allowedUIDs.contains(uid) { allowedUIDs.append(uid) }
        case "--allow-gid":
            let gid = try UInt32(flags.integer(in: 0...Int(UInt32.max)))
            if !allowedGIDs.contains(gid) { allowedGIDs.append(gid) }
        case "--max-frame": maxFrame = try flags.integer(in: 64...Int.max)
        case "--max-in-flight": maxInFlight = try flags.integer(in: 1...Int.max)
        case "--max-outbound": maxOutbound = try flags.integer(in: 1024...Int.max)
        default: return false
        }
        return true
    }

    /// Sets the server's socket mode, limits and access policy (this process's user and root, plus the allowed
    /// uids and gids).
    package func apply(to configuration: inout BusServer.Configuration) {
        configuration.socketMode = socketMode
        configuration.maxFrame = maxFrame
        configuration.maxInFlight = maxInFlight
        configuration.maxOutbound = maxOutbound
        var access = BusServer.AccessPolicy.ownerAndRoot
        access.allowedUserIDs.formUnion(allowedUIDs)
        access.allowedGroupIDs.formUnion(allowedGIDs)
        configuration.access = access
    }
}
