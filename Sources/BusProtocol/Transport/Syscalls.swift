import CContextBusLinux
import ContextBusSupport
@preconcurrency import Glibc

// Thin wrappers over the socket and file system calls the transport uses. All `sockaddr_un`, `socketpair`, `recv`,
// `send` and `stat` code lives here; callers pass raw descriptors and Swift values. Every call that may fail with
// `EINTR` goes through `systemCall` (Platform.swift), which retries it with ContextBusSupport's `retryingInterrupts`.

/// The socket and file system calls of the transport.
package enum Syscall {
    // MARK: - Sockets

    /// A non-blocking, close-on-exec `AF_UNIX` stream socket.
    package static func makeStreamSocket() throws(SystemError) -> FileDescriptor {
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        let raw = try systemCall("socket(AF_UNIX)") { socket(AF_UNIX, type, 0) }
        return FileDescriptor(adopting: raw)
    }

    /// A connected pair of non-blocking, close-on-exec `AF_UNIX` stream sockets.
    package static func makeSocketPair() throws(SystemError) -> (FileDescriptor, FileDescriptor) {
        let type = CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        var pair: (CInt, CInt) = (-1, -1)
        _ = try withUnsafeMutableBytes(of: &pair) { (raw) throws(SystemError) in
            let fds = raw.baseAddress!.assumingMemoryBound(to: CInt.self)
            return try systemCall("socketpair(AF_UNIX)") { socketpair(AF_UNIX, type, 0, fds) }
        }
        return (FileDescriptor(adopting: pair.0), FileDescriptor(adopting: pair.1))
    }

    package static func bind(_ fd: CInt, to address: UnixSocketAddress) throws(SystemError) {
        _ = try withSocketAddress(address) { (pointer, length) throws(SystemError) in
            try systemCall("bind(\(address.path))") { Glibc.bind(fd, pointer, length) }
        }
    }

    package static func listen(_ fd: CInt, backlog: CInt) throws(SystemError) {
        _ = try systemCall("listen") { Glibc.listen(fd, backlog) }
    }

    /// Connects `fd` to `address`; a Unix-domain connect completes at once or fails (`EAGAIN` when the listener's
    /// backlog is full, `ECONNREFUSED` when nothing listens, `ENOENT` when there is no socket file).
    package static func connect(_ fd: CInt, to address: UnixSocketAddress) throws(SystemError) {
        _ = try withSocketAddress(address) { (pointer, length) throws(SystemError) in
            try systemCall("connect(\(address.path))") { Glibc.connect(fd, pointer, length) }
        }
    }

    /// Accepts one connection as a non-blocking, close-on-exec descriptor; `nil` when none is pending.
    package static func accept(_ fd: CInt) throws(SystemError) -> FileDescriptor? {
        let flags = CInt(SOCK_NONBLOCK.rawValue) | CInt(SOCK_CLOEXEC.rawValue)
        do {
            let raw = try systemCall("accept4") { cctxbus_accept4(fd, nil, nil, flags) }
            return FileDescriptor(adopting: raw)
        } catch  where error.isWouldBlock {
            return nil
        }
    }

    /// Reads into `buffer`: the byte count (`0` at end of file), or `nil` when nothing is available.
    package static func receive(_ fd: CInt, into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int? {
        do {
            return try systemCall("recv") { recv(fd, buffer.baseAddress, buffer.count, 0) }
        } catch  where error.isWouldBlock {
            return nil
        }
    }

    /// Writes as much of `bytes` as the socket takes without blocking (`0` when it takes nothing). Uses
    /// `MSG_NOSIGNAL`, so a peer that has gone away gives `EPIPE` instead of killing the process with `SIGPIPE`.
    package static func send(_ fd: CInt, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        do {
            let flags = CInt(MSG_NOSIGNAL) | CInt(MSG_DONTWAIT)
            return try systemCall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, flags) }
        } catch  where error.isWouldBlock {
            return 0
        }
    }

    /// The peer's process credentials (`SO_PEERCRED`), as they were when the connection was made.
    package static func peerCredentials(_ fd: CInt) throws(SystemError) -> PeerCredentials {
        // `struct ucred` is a GNU extension that the Glibc module does not import; its layout is pid, uid, gid.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        _ = try systemCall("getsockopt(SO_PEERCRED)") {
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
        }
        return PeerCredentials(uid: credentials.uid, gid: credentials.gid, pid: credentials.pid)
    }

    /// The pending error of a socket (`SO_ERROR`), `0` when there is none.
    package static func integerOption(_ fd: CInt, _ option: CInt) throws(SystemError) -> CInt {
        var value: CInt = 0
        var length = socklen_t(MemoryLayout<CInt>.size)
        _ = try systemCall("getsockopt") { getsockopt(fd, SOL_SOCKET, option, &value, &length) }
        return value
    }

    /// `true` when `fd` is a listening `AF_UNIX` stream socket (what systemd hands over for `ListenStream=`).
    package static func isListeningUnixStreamSocket(_ fd: CInt) -> Bool {
        guard let domain = try? integerOption(fd, SO_DOMAIN), let type = try? integerOption(fd, SO_TYPE),
            let accepting = try? integerOption(fd, SO_ACCEPTCONN)
        else { return false }
        return domain == AF_UNIX && type == CInt(SOCK_STREAM.rawValue) && accepting != 0
    }

    /// Makes an inherited descriptor non-blocking and close-on-exec.
    package static func makeNonBlockingAndCloseOnExec(_ fd: CInt) throws(SystemError) {
        let status = try systemCall("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        _ = try systemCall("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, status | O_NONBLOCK) }
        let descriptorFlags = try systemCall("fcntl(F_GETFD)") { fcntl(fd, F_GETFD) }
        _ = try systemCall("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, descriptorFlags | FD_CLOEXEC) }
    }

    /// Closes a descriptor. Never retried: on Linux the descriptor is released even when `close` reports `EINTR`.
    package static func close(_ fd: CInt) {
        _ = Glibc.close(fd)
    }

    private static func withSocketAddress<Result>(
        _ address: UnixSocketAddress,
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws(SystemError) -> Result
    ) throws(SystemError) -> Result {
        var storage = sockaddr_un()
        storage.sun_family = sa_family_t(AF_UNIX)
        let path = Array(address.path.utf8)
        precondition(
            path.count < MemoryLayout.size(ofValue: storage.sun_path), "UnixSocketAddress validated the length")
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            raw.copyBytes(from: path)
            raw[path.count] = 0
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + path.count + 1)
        return try withUnsafePointer(to: &storage) { (pointer) throws(SystemError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (address) throws(SystemError) in
                try body(address, length)
            }
        }
    }

    // MARK: - Files

    /// What is at a path, without following a final symbolic link.
    package enum FileKind: Equatable {
        case missing
        case socket
        case directory
        /// Anything else; `typeBits` are the `S_IFMT` bits of `st_mode`.
        case other(typeBits: UInt32)
    }

    /// The device and inode of a file, to recognise "the same file" later.
    package struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    package static func fileKind(atPath path: String) throws(SystemError) -> FileKind {
        var status = stat()
        do {
            _ = try systemCall("lstat(\(path))") { lstat(path, &status) }
        } catch  where error.errno == ENOENT {
            return .missing
        }
        switch status.st_mode & S_IFMT {
        case S_IFSOCK: return .socket
        case S_IFDIR: return .directory
        case let bits: return .other(typeBits: UInt32(bits))
        }
    }

    /// Whether `path` is a directory, following symbolic links.
    package static func isDirectory(followingLinksAt path: String) -> Bool {
        var status = stat()
        guard (try? systemCall("stat(\(path))", { stat(path, &status) })) != nil else { return false }
        return status.st_mode & S_IFMT == S_IFDIR
    }

    package static func fileIdentity(atPath path: String) -> FileIdentity? {
        var status = stat()
        guard (try? systemCall("lstat(\(path))", { lstat(path, &status) })) != nil else { return nil }
        return FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    /// Creates a directory with exactly `mode` (set with `chmod`, so the umask cannot narrow it).
    package static func makeDirectory(atPath path: String, mode: UInt32) throws(SystemError) {
        _ = try systemCall("mkdir(\(path))") { mkdir(path, mode_t(mode)) }
        try changeMode(atPath: path, to: mode)
    }

    package static func changeMode(atPath path: String, to mode: UInt32) throws(SystemError) {
        _ = try systemCall("chmod(\(path))") { chmod(path, mode_t(mode)) }
    }

    package static func removeFile(atPath path: String) throws(SystemError) {
        _ = try systemCall("unlink(\(path))") { unlink(path) }
    }

    // MARK: - Process

    package static var processID: Int32 { getpid() }

    /// The effective user id of this process (`geteuid`), which the kernel reports to peers in `SO_PEERCRED`.
    package static var effectiveUserID: UInt32 { geteuid() }

    /// The effective group id of this process (`getegid`).
    package static var effectiveGroupID: UInt32 { getegid() }

    package static var onlineProcessorCount: Int { max(1, sysconf(CInt(_SC_NPROCESSORS_ONLN))) }

    package static func environmentValue(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    package static func removeEnvironmentValue(_ name: String) {
        _ = unsetenv(name)
    }

    /// Sleeps the calling thread (used only off the event loops, e.g. between connect retries).
    package static func sleep(milliseconds: Int) {
        CurrentThread.sleep(nanoseconds: Int64(milliseconds) * 1_000_000)
    }
}
