import Foundation
@preconcurrency import Glibc

/// A raw client of a bus service that sends frames and never reads (until `readUntilClosed`): a watcher whose
/// outbound queue the service must bound. Its receive buffer is as small as the kernel allows.
final class StalledPeer: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is used by one test at a time, from one task.
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EBADF) }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in bytes.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    deinit { close(fd) }

    /// Sends one frame: a 4-byte big-endian length, then `json`.
    func send(_ json: String) throws {
        let body = Array(json.utf8)
        let length = UInt32(body.count)
        let frame =
            [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + body
        var offset = 0
        while offset < frame.count {
            let n = frame[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw POSIXError(.EPIPE) }
            offset += n
        }
    }

    /// Reads what is buffered until the service closes the connection (at most 30 s); returns how many
    /// `device.value` events were in it.
    func readUntilClosed() -> Int {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let needle = Array(#""device.value""#.utf8)
        var count = 0
        var index = 0
        while index + needle.count <= received.count {
            if received[index] == needle[0], Array(received[index..<index + needle.count]) == needle {
                count += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        return count
    }
}
