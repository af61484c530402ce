import Dispatch
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import ContextBusTransport

struct EventLoopTests {
    @Test func runsExecutedWorkOnItsOwnThread() throws {
        try withLoop { loop in
            let ranOnLoop = Locked<Bool?>(nil)
            let done = Occurrence()
            expectFalse(loop.inEventLoop)
            loop.execute {
                ranOnLoop.withLock { $0 = loop.inEventLoop }
                done.fire()
            }
            expectTrue(done.wait())
            expectEqual(ranOnLoop.withLock { $0 }, true)
        }
    }

    @Test func keepsTheOrderOfWorkFromEachThread() throws {
        try withLoop { loop in
            let threads = 4
            let perThread = 2_000
            let seen = Locked([[Int]](repeating: [], count: threads))
            let done = Occurrence()
            DispatchQueue.concurrentPerform(iterations: threads) { thread in
                for index in 0..<perThread {
                    loop.execute {
                        let total = seen.withLock { seen -> Int in
                            seen[thread].append(index)
                            return seen.reduce(0) { $0 + $1.count }
                        }
                        if total == threads * perThread { done.fire() }
                    }
                }
            }
            expectTrue(done.wait())
            for thread in 0..<threads { expectEqual(seen.withLock { $0[thread] }, Array(0..<perThread)) }
        }
    }

    @Test func runsTimersInDeadlineOrderNotSubmissionOrder() throws {
        try withLoop { loop in
            let order = Locked<[Int]>([])
            let done = Occurrence()
            let base = ContinuousClock.now
            loop.schedule(at: base + .milliseconds(30)) {
                order.withLock { $0.append(3) }
                done.fire()
            }
            loop.schedule(at: base + .milliseconds(1)) { order.withLock { $0.append(1) } }
            loop.schedule(at: base + .milliseconds(15)) { order.withLock { $0.append(2) } }
            loop.schedule(at: base + .milliseconds(15)) { order.withLock { $0.append(22) } }
            expectTrue(done.wait())
            expectEqual(order.withLock { $0 }, [1, 2, 22, 3])
        }
    }

    @Test func neverRunsATimerBeforeItsDelay() throws {
        try withLoop { loop in
            let start = ContinuousClock.now
            let elapsed = Locked<Duration?>(nil)
            let done = Occurrence()
            loop.schedule(after: .milliseconds(25)) {
                elapsed.withLock { $0 = ContinuousClock.now - start }
                done.fire()
            }
            expectTrue(done.wait())
            let measured = try #require(elapsed.withLock { $0 })
            expectGreaterThanOrEqual(measured, .milliseconds(25))
        }
    }

    @Test func neverRunsACancelledTimer() throws {
        try withLoop { loop in
            let cancelledRan = Locked(false)
            let wasPending = Locked<Bool?>(nil)
            let done = Occurrence()
            // On the loop thread no timer can fire between schedule and cancel, whatever the scheduling delays.
            loop.execute {
                let base = ContinuousClock.now
                let cancelled = loop.schedule(at: base + .milliseconds(5)) { cancelledRan.withLock { $0 = true } }
                loop.schedule(at: base + .milliseconds(20)) { done.fire() }
                wasPending.withLock { $0 = cancelled.cancel() }
            }
            expectTrue(done.wait())
            expectEqual(wasPending.withLock { $0 }, true)
            expectFalse(cancelledRan.withLock { $0 })
        }
    }

    @Test func reportsAFiredTimerAsNoLongerCancellable() throws {
        try withLoop { loop in
            let done = Occurrence()
            let work = loop.schedule(after: .zero) { done.fire() }
            expectTrue(done.wait())
            expectFalse(work.cancel())
        }
    }

    @Test func callsTheReadinessHandlerWhenDataArrives() throws {
        try withLoop { loop in
            let (watched, peer) = try FileDescriptor.makeSocketPair()
            let readable = Occurrence()
            let registration = try loop.register(watched, for: .readable) { readiness in
                if readiness.contains(.readable) { readable.fire() }
            }
            RawPeer.write(peer, [1])
            expectTrue(readable.wait())
            registration.cancel()
        }
    }

    @Test func reportsHangupWhenThePeerCloses() throws {
        try withLoop { loop in
            let (watched, peer) = try FileDescriptor.makeSocketPair()
            let hungUp = Occurrence()
            let registration = try loop.register(watched, for: .readable) { readiness in
                if readiness.contains(.hangup) { hungUp.fire() }
            }
            peer.close()
            expectTrue(hungUp.wait())
            registration.cancel()
        }
    }

    @Test func shutdownTellsActiveRegistrationsAndJoinsTheThread() throws {
        let loop = try EventLoop(name: "shutdown")
        let (watched, _) = try FileDescriptor.makeSocketPair()
        let toldOnLoop = Locked<Bool?>(nil)
        _ = try loop.register(watched, for: .readable, onReady: { _ in }) {
            toldOnLoop.withLock { $0 = loop.inEventLoop }
            watched.close()
        }
        loop.shutdown()
        // shutdown() returned, so the thread was joined after the callback ran.
        expectEqual(toldOnLoop.withLock { $0 }, true)
        expectTrue(watched.isClosed)
    }

    @Test func runsWorkSubmittedBeforeShutdownAndDropsWorkAfter() throws {
        let loop = try EventLoop(name: "drain")
        let ran = Locked<[String]>([])
        loop.execute { ran.withLock { $0.append("before") } }
        loop.shutdown()
        loop.execute { ran.withLock { $0.append("after") } }
        expectEqual(ran.withLock { $0 }, ["before"])
    }

    @Test func refusesRegistrationsAfterShutdown() throws {
        let loop = try EventLoop(name: "closed")
        loop.shutdown()
        let (descriptor, _) = try FileDescriptor.makeSocketPair()
        #expect(throws: EventLoopError.shutDown) {
            try loop.register(descriptor, for: .readable) { _ in }
        }
    }

    @Test func shutsDownOnceWhenCalledFromTwoThreads() throws {
        let loop = try EventLoop(name: "twice")
        DispatchQueue.concurrentPerform(iterations: 2) { _ in loop.shutdown() }
        let ran = Locked(false)
        loop.execute { ran.withLock { $0 = true } }
        expectFalse(ran.withLock { $0 })
    }
}

struct EventLoopGroupTests {
    @Test func handsOutLoopsRoundRobin() throws {
        try withGroup(loops: 2) { group in
            let picked = (0..<4).map { _ in group.next() }
            expectTrue(picked[0] === picked[2])
            expectTrue(picked[1] === picked[3])
            expectTrue(picked[0] !== picked[1])
        }
    }

    @Test func runsEachLoopOnItsOwnThread() throws {
        try withGroup(loops: 2) { group in
            let onOther = Locked<Bool?>(nil)
            let done = Occurrence()
            group.loops[0].execute {
                onOther.withLock { $0 = group.loops[1].inEventLoop }
                done.fire()
            }
            expectTrue(done.wait())
            expectEqual(onOther.withLock { $0 }, false)
        }
    }
}
