/// The file system path of a Unix-domain stream socket.
///
/// The path must fit `sockaddr_un.sun_path` (108 bytes on Linux, including the terminating NUL). Linux's abstract
/// namespace (a leading NUL) is not supported: the protocol's rules about directory and file modes need a file.
package struct UnixSocketAddress: Hashable, Sendable, CustomStringConvertible {
    /// The longest path, in UTF-8 bytes, that fits `sun_path` with its terminating NUL.
    package static let maximumPathLength = 107

    /// The socket's path, absolute or relative to the working directory.
    package let path: String

    /// Validates `path` for use as a socket address.
    ///
    /// - Throws: `SocketAddressError` when the path is empty, contains a NUL byte or is too long.
    package init(path: String) throws(SocketAddressError) {
        let length = path.utf8.count
        if length == 0 { throw .emptyPath }
        if path.utf8.contains(0) { throw .containsNUL(path: path) }
        if length > Self.maximumPathLength {
            throw .pathTooLong(path: path, length: length, limit: Self.maximumPathLength)
        }
        self.path = path
    }

    /// The directory holding the socket file (`"."` for a bare file name).
    var parentDirectory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    package var description: String { path }
}

/// Why a string cannot be a `UnixSocketAddress`.
package enum SocketAddressError: Error, Hashable, Sendable, CustomStringConvertible {
    case emptyPath
    case containsNUL(path: String)
    case pathTooLong(path: String, length: Int, limit: Int)

    package var description: String {
        switch self {
        case .emptyPath:
            return "a Unix socket path must not be empty"
        case .containsNUL(let path):
            return "the Unix socket path \(path.debugDescription) contains a NUL byte"
        case .pathTooLong(let path, let length, let limit):
            return "the Unix socket path \(path) is \(length) bytes long; the limit is \(limit)"
        }
    }
}
