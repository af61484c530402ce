import Synchronization

/// An owned file descriptor that is closed exactly once: by `close()`, or when the last reference goes away.
///
/// Whoever holds the descriptor decides when it is closed; the transport's types close theirs on their event loop
/// after removing them from epoll, so a number is never reused while still registered.
package final class FileDescriptor: Sendable, CustomStringConvertible {
    /// The C descriptor number; meaningless once `isClosed`.
    package let rawValue: CInt
    private let closed = Atomic<Bool>(false)

    /// Takes ownership of `rawValue`, which this object will close.
    package init(adopting rawValue: CInt) {
        precondition(rawValue >= 0, "a file descriptor is never negative")
        self.rawValue = rawValue
    }

    deinit { close() }

    /// Whether `close()` has been called.
    package var isClosed: Bool { closed.load(ordering: .acquiring) }

    /// Closes the descriptor; later calls do nothing.
    package func close() {
        guard closed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        Syscall.close(rawValue)
    }

    /// A connected pair of non-blocking, close-on-exec Unix stream sockets (`socketpair(2)`), for in-process
    /// connections and tests.
    ///
    /// - Throws: `SystemError` when the process is out of descriptors.
    package static func makeSocketPair() throws -> (FileDescriptor, FileDescriptor) {
        try Syscall.makeSocketPair()
    }

    package var description: String { isClosed ? "fd \(rawValue) (closed)" : "fd \(rawValue)" }
}
