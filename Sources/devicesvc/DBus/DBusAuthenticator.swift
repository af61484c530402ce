/// The client side of the D-Bus SASL handshake, with the EXTERNAL mechanism.
///
/// ```
/// client: \0AUTH EXTERNAL 31303030\r\n     (hex of the uid "1000" as ASCII decimal)
/// server: OK 1234deadbeef…\r\n             (the server GUID)
/// client: BEGIN\r\n                        (binary messages follow)
/// ```
///
/// The state machine is pure (bytes in, bytes out) so it can be tested without a socket; `run(on:)` drives it over
/// a socket before the connection's reader starts.
package struct DBusAuthenticator {
    /// What to do after a server line.
    package enum Step: Equatable {
        /// Send these bytes and wait for the next line.
        case send([UInt8])
        /// Send these bytes (`BEGIN`); authentication succeeded with this server GUID.
        case finish(send: [UInt8], serverGUID: String)
    }

    /// The longest line a server may send; a longer one is hostile.
    package static let maximumLineLength = 16_384

    package let userID: UInt32

    package init(userID: UInt32) {
        self.userID = userID
    }

    /// The bytes that open the handshake: the credentials NUL byte and the AUTH command.
    package var openingBytes: [UInt8] {
        let hex = Array(String(userID).utf8).map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
        }.joined()
        return [0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8)
    }

    /// Reacts to one line from the server (without its `\r\n`).
    ///
    /// - Throws: `DBusConnectionError.authenticationFailed` when the server rejects us or says something the
    ///   protocol does not allow here.
    package func step(afterServerLine line: String) throws(DBusConnectionError) -> Step {
        let command = line.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
        switch command {
        case "OK":
            let guid = line.dropFirst(2).trimmingSpaces()
            guard !guid.isEmpty else { throw .authenticationFailed("OK without a server GUID") }
            return .finish(send: Array("BEGIN\r\n".utf8), serverGUID: guid)
        case "DATA":
            // The initial response was not used; send it (empty: the server takes our socket credentials).
            return .send(Array("DATA\r\n".utf8))
        case "REJECTED":
            throw .authenticationFailed("server rejected EXTERNAL; it offers: \(line.dropFirst(8).trimmingSpaces())")
        case "ERROR":
            throw .authenticationFailed("server error: \(line.dropFirst(5).trimmingSpaces())")
        default:
            throw .authenticationFailed("unexpected server line \"\(line.prefix(80))\"")
        }
    }

    /// Runs the handshake over a connected socket, blocking at most `timeout` for each server line.
    ///
    /// - Returns: the server GUID, and any bytes the server sent after its `OK` line (the start of the message
    ///   stream).
    /// - Throws: `DBusConnectionError` when the server rejects us, hangs up, times out or sends an overlong line.
    package func run(
        on socket: DBusSocket, timeout: Duration
    ) throws(DBusConnectionError) -> (
        serverGUID: String, leftover: [UInt8]
    ) {
        socket.setReceiveTimeout(timeout)
        defer { socket.setReceiveTimeout(nil) }
        try socket.send(openingBytes)
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            while let newline = lineEnd(in: pending) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeFirst(newline + 2)
                switch try step(afterServerLine: line) {
                case .send(let bytes):
                    try socket.send(bytes)
                case .finish(let bytes, let guid):
                    try socket.send(bytes)
                    return (guid, pending)
                }
            }
            guard pending.count <= DBusAuthenticator.maximumLineLength else {
                throw .authenticationFailed("server line longer than \(DBusAuthenticator.maximumLineLength) bytes")
            }
            let count: Int
            do {
                count = try socket.receive(into: &chunk)
            } catch .system(_, let code) where isReceiveTimeout(code) {
                throw .authenticationFailed("no answer from the server within \(timeout)")
            }
            guard count > 0 else { throw .authenticationFailed("server closed the connection during authentication") }
            pending.append(contentsOf: chunk[0..<count])
        }
    }

    private func lineEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for index in 0..<(bytes.count - 1) where bytes[index] == 13 && bytes[index + 1] == 10 {
            return index
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
