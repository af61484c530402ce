/// The process at the other end of a Unix-domain connection, as the kernel reports it (`SO_PEERCRED`).
///
/// The values are those of the peer when it called `connect` (or `socketpair`); they cannot be forged by the peer.
public struct PeerCredentials: Hashable, Sendable, Codable, CustomStringConvertible {
    public var uid: UInt32
    public var gid: UInt32
    public var pid: Int32

    public init(uid: UInt32, gid: UInt32, pid: Int32) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
    }

    public var description: String { "uid \(uid) gid \(gid) pid \(pid)" }
}
