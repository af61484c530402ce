@preconcurrency import Glibc

// epoll and eventfd, reached through `HiddenLibc` because the Swift Glibc module does not import their headers.
// The constants below are the kernel ABI values from <sys/epoll.h> (stable since Linux 2.6.17).
private let epollIn: UInt32 = 0x001
private let epollOut: UInt32 = 0x004
private let epollErr: UInt32 = 0x008
private let epollHup: UInt32 = 0x010
private let epollRdHup: UInt32 = 0x2000
private let epollCtlAdd: CInt = 1
private let epollCtlDel: CInt = 2
private let epollCtlMod: CInt = 3

// `struct epoll_event { uint32_t events; epoll_data_t data; }` is declared `__EPOLL_PACKED` on x86_64 only
// (12 bytes, data at offset 4); elsewhere it has natural alignment (16 bytes, data at offset 8).
#if arch(x86_64)
private let eventStride = 12
private let dataOffset = 4
#else
private let eventStride = 16
private let dataOffset = 8
#endif

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
            adopting: try retryingInterrupts("epoll_create1") { HiddenLibc.epollCreate1(O_CLOEXEC) })
        wakeup = FileDescriptor(
            adopting: try retryingInterrupts("eventfd") { HiddenLibc.eventFD(0, O_CLOEXEC | O_NONBLOCK) })
        try add(wakeup.rawValue, id: Self.wakeupID, interest: .readable)
    }

    func add(_ fd: CInt, id: UInt64, interest: IOInterest) throws(SystemError) {
        try control(epollCtlAdd, fd, id: id, interest: interest, operation: "epoll_ctl(ADD)")
    }

    func modify(_ fd: CInt, id: UInt64, interest: IOInterest) throws(SystemError) {
        try control(epollCtlMod, fd, id: id, interest: interest, operation: "epoll_ctl(MOD)")
    }

    /// Removes `fd`; a descriptor that is already gone is not an error.
    func remove(_ fd: CInt) {
        _ = try? retryingInterrupts("epoll_ctl(DEL)") {
            HiddenLibc.epollControl(instance.rawValue, epollCtlDel, fd, nil)
        }
    }

    /// Waits for events; `timeout` is in milliseconds, `-1` waits indefinitely.
    func wait(into events: inout EpollEvents, timeout: CInt) throws(SystemError) -> Int {
        let storage = events.storage
        let capacity = CInt(events.capacity)
        return Int(
            try retryingInterrupts("epoll_wait") {
                HiddenLibc.epollWait(instance.rawValue, storage, capacity, timeout)
            })
    }

    /// Wakes a thread blocked in `wait` (from any thread).
    func wake() {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated: a wake-up is pending anyway.
        _ = try? retryingInterrupts("write(eventfd)") { write(wakeup.rawValue, &one, 8) }
    }

    /// Resets the wake-up counter after `wait` reported it.
    func consumeWakeups() {
        var count: UInt64 = 0
        _ = try? retryingInterrupts("read(eventfd)") { read(wakeup.rawValue, &count, 8) }
    }

    private func control(
        _ command: CInt, _ fd: CInt, id: UInt64, interest: IOInterest, operation: String
    ) throws(SystemError) {
        var mask = epollErr | epollHup
        if interest.contains(.readable) { mask |= epollIn | epollRdHup }
        if interest.contains(.writable) { mask |= epollOut }
        var event: (UInt64, UInt64) = (0, 0)  // room for either layout
        _ = try withUnsafeMutableBytes(of: &event) { (raw) throws(SystemError) in
            raw.storeBytes(of: mask, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: id, toByteOffset: dataOffset, as: UInt64.self)
            return try retryingInterrupts(operation) {
                HiddenLibc.epollControl(instance.rawValue, command, fd, raw.baseAddress)
            }
        }
    }
}

/// The buffer `epoll_wait` fills; owned by the loop thread's run function.
struct EpollEvents: ~Copyable {
    let capacity: Int
    fileprivate let storage: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        storage = UnsafeMutableRawPointer.allocate(byteCount: capacity * eventStride, alignment: 8)
    }

    deinit { storage.deallocate() }

    /// The registration id and readiness of the `index`th event of the last `wait`.
    subscript(index: Int) -> (id: UInt64, readiness: IOReadiness) {
        let base = storage + index * eventStride
        let mask = base.loadUnaligned(as: UInt32.self)
        let id = base.loadUnaligned(fromByteOffset: dataOffset, as: UInt64.self)
        var readiness: IOReadiness = []
        if mask & epollIn != 0 { readiness.insert(.readable) }
        if mask & epollOut != 0 { readiness.insert(.writable) }
        if mask & (epollHup | epollRdHup) != 0 { readiness.insert(.hangup) }
        if mask & epollErr != 0 { readiness.insert(.error) }
        return (id, readiness)
    }
}
