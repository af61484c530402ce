// The one platform import block of ContextBusTransport. Linux (Glibc) only: we add no branches we cannot test.
// The three other files that call C directly (Syscalls.swift: sockets and files; Epoll.swift: epoll and eventfd, with
// CContextBusLinux; DatagramSocket.swift: the one datagram, sd_notify's) import Glibc plainly; everything else in the module sees only the Swift wrappers declared there.
import ContextBusSupport

#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("The ContextBus transport supports Linux (Glibc) only")
#endif

/// A failed system call: the C `errno` plus the operation that failed.
///
/// ```swift
/// catch let error as SystemError where error.errno == ECONNRESET { … }
/// ```
package struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C error number (`errno`) the call failed with.
    package let errno: CInt
    /// What was being attempted, e.g. `"bind(/run/ctxbus/store.sock)"`.
    package let operation: String

    /// Creates an error for `operation` that failed with the C error number `errno`.
    package init(errno: CInt, operation: String) {
        self.errno = errno
        self.operation = operation
    }

    /// The system's text for the error number, from `strerror`.
    package var message: String { String(cString: strerror(errno)) }

    /// One line, e.g. `"connect(/run/x.sock) failed: Connection refused (errno 111)"`.
    package var description: String { "\(operation) failed: \(message) (errno \(errno))" }

    /// The error for the calling thread's current `errno`.
    static func current(_ operation: @autoclosure () -> String) -> SystemError {
        SystemError(errno: Glibc.errno, operation: operation())
    }

    /// `ENOENT`: no such file or directory.
    static let noSuchFile = ENOENT
    /// `ECONNREFUSED`: nothing listens on the socket.
    static let connectionRefused = ECONNREFUSED
    /// `EACCES`: permission denied by file modes.
    static let accessDenied = EACCES
    /// `EPERM`: operation not permitted.
    static let notPermitted = EPERM
    /// `EEXIST`: the file exists.
    static let fileExists = EEXIST
    /// `EADDRINUSE`: the address is bound by another socket.
    static let addressInUse = EADDRINUSE
    /// `EMFILE`/`ENFILE`: the process or the system is out of descriptors.
    static let tooManyOpenFiles = [EMFILE, ENFILE]

    /// The error for an operation on a descriptor that has been closed (`EBADF`).
    static func closedDescriptor(_ operation: String) -> SystemError {
        SystemError(errno: EBADF, operation: operation)
    }

    /// `true` for `EAGAIN`/`EWOULDBLOCK`: a non-blocking call that would have had to wait.
    var isWouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK }
}

/// Runs a system call through `retryingInterrupts` (ContextBusSupport's, the package's one `EINTR` retry) and
/// turns its failure into a `SystemError`.
///
/// - Parameters:
///   - operation: Names the call for the error, evaluated only on failure.
///   - call: The system call; it returns `-1` and sets `errno` on failure.
/// - Returns: The call's non-negative result.
/// - Throws: `SystemError` for any failure other than `EINTR`.
@inline(__always)
func systemCall<Result: BinaryInteger>(
    _ operation: @autoclosure () -> String, _ call: () -> Result
) throws(SystemError) -> Result {
    let result = retryingInterrupts(call)
    if result != -1 { return result }
    throw SystemError(errno: Glibc.errno, operation: operation())
}

/// A joinable OS thread: each event loop runs on one.
struct OSThread: Sendable {
    private let handle: pthread_t

    /// An opaque id of the calling thread, comparable with `id` of a spawned thread.
    static var currentID: UInt { UInt(pthread_self()) }

    /// The id of this thread, as `currentID` reports it on the thread itself.
    var id: UInt { UInt(handle) }

    /// Starts a thread running `body`.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws(SystemError) -> OSThread {
        final class Start: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let start = Unmanaged.passRetained(Start(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(
            &handle, nil,
            { argument in
                Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue().body()
                return nil
            }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SystemError(errno: result, operation: "pthread_create")
        }
        return OSThread(handle: handle)
    }

    /// Waits for the thread to finish; must not be called on the thread itself.
    func join() {
        _ = pthread_join(handle, nil)
    }
}
