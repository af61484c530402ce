import Foundation
@preconcurrency import Glibc

@testable import ContextBusSupport
@testable import ContextBusTransport

/// A blocking Unix-socket client that writes raw bytes and reads raw frames: for hostile input
/// and for a subscriber that stops reading.
final class RawBusConnection: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is used by one test thread at a time.
    let fd: Int32

    /// Connects to `path`; a read that waits longer than `receiveTimeoutSeconds` throws (a guard, not a timing check).
    init(path: String, receiveBuffer: Int32? = nil, receiveTimeoutSeconds: Int = 20) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawBusConnectionError.system("socket", errno) }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard Self.connect(fd, path) else {
            let error = errno
            close(fd)
            throw RawBusConnectionError.system("connect", error)
        }
    }

    deinit { close(fd) }

    private static func connect(_ fd: Int32, _ path: String) -> Bool {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in bytes.prefix(buffer.count - 1).enumerated() { buffer[i] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Whether something accepts connections at `path`.
    static func canConnect(to path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        return connect(fd, path)
    }

    /// Writes `bytes` whole.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw RawBusConnectionError.system("send", errno) }
            offset += n
        }
    }

    /// Writes one frame holding `payload`.
    func writeFrame(_ payload: [UInt8]) throws {
        try write(Frame.encode(payload: payload))
    }

    /// Writes one frame holding the JSON text `text`.
    func writeFrame(_ text: String) throws {
        try writeFrame(Array(text.utf8))
    }

    /// Sends a request and returns the next message that is not an event.
    func call(_ id: Int, _ method: String, _ params: String = "{}") throws -> JSONValue {
        try writeFrame(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
        while true {
            guard let message = try readMessage() else { throw RawBusConnectionError.closed }
            if message["method"] == nil { return message }
        }
    }

    /// `bus.hello`.
    func hello() throws {
        let answer = try call(0, "bus.hello", #"{"protocol":1,"client":"raw"}"#)
        guard answer["result"] != nil else { throw RawBusConnectionError.refused(answer) }
    }

    /// Reads exactly `count` bytes; `nil` at end of file.
    private func read(_ count: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            let n = buffer[offset...].withUnsafeMutableBytes { bytes in
                retryingInterrupts { recv(fd, bytes.baseAddress, bytes.count, 0) }
            }
            if n == 0 { return nil }
            if n < 0 {
                if errno == ECONNRESET { return nil }
                throw RawBusConnectionError.system("recv", errno)
            }
            offset += n
        }
        return buffer
    }

    /// The next frame's JSON; `nil` when the server closed the connection.
    func readMessage() throws -> JSONValue? {
        try readSizedMessage()?.message
    }

    /// The next frame's JSON and its payload's length in bytes; `nil` when the server closed the connection.
    func readSizedMessage() throws -> (message: JSONValue, length: Int)? {
        guard let header = try read(4) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        guard let body = try read(length) else { return nil }
        return (try JSONParser().parse(body), length)
    }

    /// Whether the server has closed the connection (reads what is left until end of file).
    func readUntilClosed() throws -> [JSONValue] {
        var messages: [JSONValue] = []
        while let message = try readMessage() { messages.append(message) }
        return messages
    }
}

enum RawBusConnectionError: Error, CustomStringConvertible {
    case system(String, Int32)
    case closed
    case refused(JSONValue)

    var description: String {
        switch self {
        case .system(let call, let error): return "\(call) failed: \(String(cString: strerror(error)))"
        case .closed: return "the server closed the connection"
        case .refused(let answer): return "refused: \(answer)"
        }
    }
}
