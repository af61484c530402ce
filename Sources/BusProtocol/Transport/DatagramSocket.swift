@preconcurrency import Glibc

/// One datagram to a Unix-domain `SOCK_DGRAM` socket named by a path or, with a leading `@`, by a name in Linux's
/// abstract namespace: what `sd_notify(3)` does with `$NOTIFY_SOCKET`.
///
/// The other calls of the transport are on stream sockets with file-system paths (`Syscalls.swift`,
/// `UnixSocketAddress`); this file holds the one `sockaddr_un` built for a datagram, abstract names included.
package enum DatagramSocket {
    /// Why a datagram could not be sent.
    package enum SendError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The address is empty, too long for `sun_path`, or holds a NUL byte.
        case invalidAddress(String)
        case system(SystemError)

        package var description: String {
            switch self {
            case .invalidAddress(let address): return "\(address.debugDescription) is not a Unix socket address"
            case .system(let error): return error.description
            }
        }
    }

    /// Sends `payload` as one datagram to `address` (a path, or `@name` for the abstract namespace), from a new
    /// socket closed on return. Never blocks: a receiver whose queue is full fails the send with `EAGAIN`.
    ///
    /// - Throws: `SendError`.
    package static func send(_ payload: [UInt8], to address: String) throws(SendError) {
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        // sd_notify(3): "@" at the start names an abstract socket, whose first byte in sun_path is NUL.
        let isAbstract = bytes.first == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        guard bytes.count >= (isAbstract ? 2 : 1), bytes.count <= capacity - (isAbstract ? 0 : 1),
            !bytes.dropFirst(isAbstract ? 1 : 0).contains(0)
        else { throw .invalidAddress(address) }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if bytes.count < raw.count { raw[bytes.count] = 0 }
        }
        // An abstract name is exactly its bytes (no terminating NUL counts); a path includes its NUL.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (isAbstract ? 0 : 1))
        let type = CInt(SOCK_DGRAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue) | CInt(SOCK_NONBLOCK.rawValue)
        let descriptor: CInt
        do {
            descriptor = try systemCall("socket(AF_UNIX, SOCK_DGRAM)") { socket(AF_UNIX, type, 0) }
        } catch {
            throw .system(error)
        }
        defer { Syscall.close(descriptor) }
        let sent = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                payload.withUnsafeBytes { raw in
                    Result { () throws(SystemError) in
                        try systemCall("sendto(\(address))") {
                            sendto(descriptor, raw.baseAddress, raw.count, CInt(MSG_NOSIGNAL), socketAddress, length)
                        }
                    }
                }
            }
        }
        if case .failure(let error) = sent { throw .system(error) }
    }
}
