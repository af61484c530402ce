import CContextBusLinux
@preconcurrency import Glibc

// epoll and eventfd through the C shim module `CContextBusLinux`, since the Swift Glibc module does not import
// their headers. The shim's functions take and give an event's mask and 64-bit id, so no Swift code lays out
// `struct epoll_event` (packed on x86_64 only).
private let epollIn = UInt32(EPOLLIN.rawValue)
private let epollOut = UInt32(EPOLLOUT.rawValue)
private let epollErr = UInt32(EPOLLERR.rawValue)
private let epollHup = UInt32(EPOLLHUP.rawValue)
private let epollRdHup = UInt32(EPOLLRDHUP.rawValue)

/// One epoll instance plus the eventfd that wakes it, used level-triggered (see docs/transport.md).
///
/// Each registration carries a 64-bit id chosen by the event loop instead of the descriptor number, so an event
/// that arrives for a descriptor closed and reused within one loop iteration cannot reach the wrong owner.
final class Epoll: Sendable {
    /// The id reported for the wake-up eventfd; event loop registrations start at 1.
    static let wakeupID: UInt64 = 0

    private let instance: FileDescriptor
    private let wakeup: FileDescriptor

    init() throws(SystemError) {
        instance = FileDescriptor(
            adopting: try systemCall("epoll_create1") { epoll_create1(CInt(EPOLL_CLOEXEC)) })
        wakeup = FileDescriptor(
            adopting: try systemCall("eventfd") { eventfd(0, CInt(EFD_CLOEXEC) | CInt(EFD_NONBLOCK)) })
        try add(wakeup.rawValue, id: Self.wakeupID, interest: .readable)
    }

    func add(_ fd: CInt, id: UInt64, interest: IOInterest) throws(SystemError) {
        try control(EPOLL_CTL_ADD, fd, id: id, interest: interest, operation: "epoll_ctl(ADD)")
    }

    func modify(_ fd: CInt, id: UInt64, interest: IOInterest) throws(SystemError) {
        try control(EPOLL_CTL_MOD, fd, id: id, interest: interest, operation: "epoll_ctl(MOD)")
    }

    /// Removes `fd`; a descriptor that is already gone is not an error.
    func remove(_ fd: CInt) {
        _ = try? systemCall("epoll_ctl(DEL)") {
            cctxbus_epoll_ctl(instance.rawValue, EPOLL_CTL_DEL, fd, 0, 0)
        }
    }

    /// Waits for events; `timeout` is in milliseconds, `-1` waits indefinitely.
    func wait(into events: inout EpollEvents, timeout: CInt) throws(SystemError) -> Int {
        let storage = events.storage
        let capacity = CInt(events.capacity)
        return Int(
            try systemCall("epoll_wait") {
                cctxbus_epoll_wait(instance.rawValue, storage, capacity, timeout)
            })
    }

    /// Wakes a thread blocked in `wait` (from any thread).
    func wake() {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated: a wake-up is pending anyway.
        _ = try? systemCall("write(eventfd)") { write(wakeup.rawValue, &one, 8) }
    }

    /// Resets the wake-up counter after `wait` reported it.
    func consumeWakeups() {
        var count: UInt64 = 0
        _ = try? systemCall("read(eventfd)") { read(wakeup.rawValue, &count, 8) }
    }

    private func control(
        _ command: CInt, _ fd: CInt, id: UInt64, interest: IOInterest, operation: String
    ) throws(SystemError) {
        var mask = epollErr | epollHup
        if interest.contains(.readable) { mask |= epollIn | epollRdHup }
        if interest.contains(.writable) { mask |= epollOut }
        _ = try systemCall(operation) { cctxbus_epoll_ctl(instance.rawValue, command, fd, mask, id) }
    }
}

/// The buffer `epoll_wait` fills; owned by the loop thread's run function.
struct EpollEvents: ~Copyable {
    let capacity: Int
    fileprivate let storage: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity * cctxbus_epoll_event_size(), alignment: 8)
    }

    deinit { storage.deallocate() }

    /// The registration id and readiness of the `index`th event of the last `wait`.
    subscript(index: Int) -> (id: UInt64, readiness: IOReadiness) {
        let mask = cctxbus_epoll_event_mask(storage, CInt(index))
        let id = cctxbus_epoll_event_id(storage, CInt(index))
        var readiness: IOReadiness = []
        if mask & epollIn != 0 { readiness.insert(.readable) }
        if mask & epollOut != 0 { readiness.insert(.writable) }
        if mask & (epollHup | epollRdHup) != 0 { readiness.insert(.hangup) }
        if mask & epollErr != 0 { readiness.insert(.error) }
        return (id, readiness)
    }
}
