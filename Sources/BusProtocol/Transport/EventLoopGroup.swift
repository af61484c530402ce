import Synchronization

/// A fixed set of event loops handing out loops round-robin, e.g. one per accepted connection.
public final class EventLoopGroup: Sendable {
    /// The loops, each with its own thread.
    public let loops: [EventLoop]
    private let cursor = Atomic<Int>(0)

    /// One loop per online processor, at most two: the bus is I/O-light and small machines run several services.
    public static var defaultLoopCount: Int { min(2, Syscall.onlineProcessorCount) }

    /// Starts `loopCount` loops.
    ///
    /// - Throws: `SystemError` when a loop cannot be started (those already started are shut down).
    public init(loopCount: Int = EventLoopGroup.defaultLoopCount, name: String = "bus") throws {
        precondition(loopCount > 0, "an EventLoopGroup needs at least one loop")
        var loops: [EventLoop] = []
        do {
            for index in 0..<loopCount { loops.append(try EventLoop(name: "\(name)-\(index)")) }
        } catch {
            for loop in loops { loop.shutdown() }
            throw error
        }
        self.loops = loops
    }

    /// The next loop in round-robin order; callable from any thread.
    public func next() -> EventLoop {
        let index = cursor.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[index % loops.count]
    }

    /// Shuts every loop down and joins their threads; must not be called on one of the loops.
    public func shutdown() {
        for loop in loops { loop.shutdown() }
    }
}
