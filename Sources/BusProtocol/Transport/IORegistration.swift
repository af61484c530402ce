/// The readiness a registration asks the event loop to watch for.
package struct IOInterest: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Data (or end of file, or a pending connection on a listener) can be read.
    package static let readable = IOInterest(rawValue: 1 << 0)
    /// The socket's send buffer has room.
    package static let writable = IOInterest(rawValue: 1 << 1)
}

/// What the event loop observed on a registered descriptor.
package struct IOReadiness: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let readable = IOReadiness(rawValue: 1 << 0)
    package static let writable = IOReadiness(rawValue: 1 << 1)
    /// The peer closed its end (`EPOLLHUP` or `EPOLLRDHUP`); reported whatever the interest.
    package static let hangup = IOReadiness(rawValue: 1 << 2)
    /// An error is pending on the descriptor (`EPOLLERR`); reported whatever the interest.
    package static let error = IOReadiness(rawValue: 1 << 3)
}

/// A descriptor watched by an event loop; returned by `EventLoop.register(_:for:onReady:onLoopShutdown:)`.
///
/// The registration does not own the descriptor: cancel the registration, then close the descriptor.
package final class IORegistration: Sendable {
    /// The loop that watches the descriptor and runs the handlers.
    package let loop: EventLoop
    /// The watched descriptor.
    package let descriptor: FileDescriptor
    let id: UInt64

    init(loop: EventLoop, descriptor: FileDescriptor, id: UInt64) {
        self.loop = loop
        self.descriptor = descriptor
        self.id = id
    }

    /// Changes what the loop watches for; callable from any thread while the registration is active.
    ///
    /// - Throws: `SystemError` from `epoll_ctl` (e.g. when the descriptor was closed before `cancel()`).
    package func setInterest(_ interest: IOInterest) throws {
        guard loop.isRegistered(id) else { return }
        try loop.epoll.modify(descriptor.rawValue, id: id, interest: interest)
    }

    /// Stops watching; callable from any thread, more than once. No handler of this registration runs after
    /// `cancel()` returns on the loop thread; from another thread, one already dispatched may still finish.
    package func cancel() {
        loop.unregister(self)
    }
}
