import ContextBusSupport
@preconcurrency import Glibc

/// A connected Unix stream socket to a D-Bus server: the only file with raw socket calls. Interrupted calls are
/// retried by ContextBusSupport's `retryingInterrupts`, the package's one `EINTR` retry.
///
/// The descriptor has one owner, the connection, which closes it exactly once.
package struct DBusSocket: Sendable {
    package let descriptor: Int32

    /// Connects to a Unix socket address.
    ///
    /// - Throws: `DBusConnectionError.system` with the failing call and errno, or `.invalidAddress` when the path
    ///   does not fit `sockaddr_un`.
    package static func connect(to address: DBusAddress) throws(DBusConnectionError) -> DBusSocket {
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        let pathBytes: [UInt8]
        switch address {
        case .unixPath(let path): pathBytes = Array(path.utf8)
        case .unixAbstract(let name): pathBytes = [0] + Array(name.utf8)
        }
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard pathBytes.count < capacity else {
            throw .invalidAddress(address.description, reason: "socket path longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        // An abstract name's length is exact; a path is NUL-terminated inside the struct.
        let length = socklen_t(pathOffset + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .system(operation: "socket", errno: errno) }
        let result = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                retryingInterrupts { Glibc.connect(descriptor, address, length) }
            }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .system(operation: "connect to \(address)", errno: code)
        }
        return DBusSocket(descriptor: descriptor)
    }

    /// Writes all of `bytes`, blocking until the kernel took them.
    ///
    /// - Throws: `DBusConnectionError.system` (`EPIPE` when the peer is gone; no `SIGPIPE` is raised).
    package func send(_ bytes: [UInt8]) throws(DBusConnectionError) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                retryingInterrupts {
                    Glibc.send(descriptor, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                }
            }
            guard count > 0 else { throw .system(operation: "send", errno: count == 0 ? EPIPE : errno) }
            sent += count
        }
    }

    /// Reads what is available (blocking until something is) into `buffer`.
    ///
    /// - Returns: the number of bytes read; 0 when the peer closed the connection.
    /// - Throws: `DBusConnectionError.system` on a read error or when a receive timeout expires.
    package func receive(into buffer: inout [UInt8]) throws(DBusConnectionError) -> Int {
        let count = buffer.withUnsafeMutableBytes { raw in
            retryingInterrupts { recv(descriptor, raw.baseAddress, raw.count, 0) }
        }
        guard count >= 0 else { throw .system(operation: "recv", errno: errno) }
        return count
    }

    /// Limits how long one `receive` blocks (`SO_RCVTIMEO`); `nil` blocks without limit.
    package func setReceiveTimeout(_ timeout: Duration?) {
        var value = timeval()
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            value.tv_sec = Int(max(seconds, 0))
            value.tv_usec = Int(attoseconds / 1_000_000_000_000)
            if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1 }
        }
        _ = setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Wakes a blocked `receive` (it returns 0) and fails later sends, without releasing the descriptor.
    package func shutdown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Releases the descriptor. Call once, after no thread uses the socket any more.
    package func close() {
        _ = Glibc.close(descriptor)
    }

    /// The effective user ID, which SASL EXTERNAL authenticates as.
    package static var effectiveUserID: UInt32 { geteuid() }
}
