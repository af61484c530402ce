import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusReactive
@testable import ContextBusSupport

struct ChainQueueTests {
    /// A chain that runs until the test completes it.
    final class ManualChain: Sendable {
        let started = Counter()
        private let sink = Locked<Observer<Int, Never>?>(nil)

        var signal: Signal<Int, Never> {
            Signal { [self] observer, _ in
                started.increment()
                sink.withLock { $0 = observer }
            }
        }

        func complete() {
            sink.withLock { $0 }?.sendCompleted()
        }
    }

    /// Records, per key, how many chains are inside at once and the order chains start in.
    final class Tracker: Sendable {
        private struct State {
            var inside: [Int: Int] = [:]
            var totalInside = 0
            var maxTotalInside = 0
            var overlaps = 0
            var starts: [Int: [Int]] = [:]
        }

        private let state = Locked(State())

        func begin(key: Int, sequence: Int) {
            state.withLock { state in
                state.inside[key, default: 0] += 1
                if state.inside[key]! > 1 { state.overlaps += 1 }
                state.totalInside += 1
                state.maxTotalInside = max(state.maxTotalInside, state.totalInside)
                state.starts[key, default: []].append(sequence)
            }
        }

        func end(key: Int) {
            state.withLock { state in
                state.inside[key]! -= 1
                state.totalInside -= 1
            }
        }

        var overlaps: Int { state.withLock { $0.overlaps } }
        var maxTotalInside: Int { state.withLock { $0.maxTotalInside } }
        var starts: [Int: [Int]] { state.withLock { $0.starts } }
    }

    private func makeTrackedChain(key: Int, sequence: Int, tracker: Tracker) -> Signal<Int, Never> {
        Signal { observer, _ in
            tracker.begin(key: key, sequence: sequence)
            runOnNewThread {
                tracker.end(key: key)
                observer.send(value: sequence)
                observer.sendCompleted()
            }
        }
    }

    @Test func chainsWithTheSameKeyRunOneAfTheOtherInArrivalOrder() {
        let queue = ChainQueue<String>()
        let first = ManualChain()
        let second = ManualChain()
        let firstRecorder = EventRecorder<Int, Never>()
        queue.enqueue(first.signal, for: "a").start(firstRecorder.observer)
        queue.enqueue(second.signal, for: "a").start(Observer())
        expectEqual(first.started.value, 1)
        expectEqual(second.started.value, 0)
        expectEqual(queue.status.waitingCounts, ["a": 1])
        first.complete()
        expectEqual(firstRecorder.events, [.completed])
        expectEqual(second.started.value, 1)
        expectEqual(queue.status.runningKeys, ["a"])
        second.complete()
        expectEqual(queue.status.runningCount, 0)
    }

    @Test func chainsWithDifferentKeysRunConcurrently() {
        let queue = ChainQueue<String>()
        let a = ManualChain()
        let b = ManualChain()
        queue.enqueue(a.signal, for: "a").start(Observer())
        queue.enqueue(b.signal, for: "b").start(Observer())
        expectEqual(a.started.value, 1)
        expectEqual(b.started.value, 1)
        expectEqual(queue.status.runningKeys, ["a", "b"])
    }

    @Test func chainsOnDifferentKeysOverlapInTimeOnDifferentThreads() {
        // Chain "a" only finishes once chain "b" has started: it can only pass if both run at once.
        let queue = ChainQueue<String>()
        let bStarted = DispatchSemaphore(value: 0)
        let recorder = EventRecorder<Bool, Never>()
        queue.enqueue(
            Signal<Bool, Never> { observer, _ in
                runOnNewThread {
                    observer.send(value: wait(bStarted))
                    observer.sendCompleted()
                }
            }, for: "a"
        ).start(recorder.observer)
        queue.enqueue(
            Signal<Bool, Never> { observer, _ in
                bStarted.signal()
                observer.sendCompleted()
            }, for: "b"
        ).start(Observer())
        expectTrue(recorder.waitForTermination())
        expectEqual(recorder.values, [true])
    }

    @Test func globalModeRunsOneChainAtATime() {
        let queue = ChainQueue<String>(mode: .global)
        let a = ManualChain()
        let b = ManualChain()
        queue.enqueue(a.signal, for: "a").start(Observer())
        queue.enqueue(b.signal, for: "b").start(Observer())
        expectEqual(a.started.value, 1)
        expectEqual(b.started.value, 0)
        a.complete()
        expectEqual(b.started.value, 1)
    }

    @Test func theMaxConcurrentCapHolds() {
        let queue = ChainQueue<Int>(maxConcurrent: 3)
        let chains = (0..<10).map { _ in ManualChain() }
        for (key, chain) in chains.enumerated() { queue.enqueue(chain.signal, for: key).start(Observer()) }
        expectEqual(chains.map(\.started.value), [1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
        chains[1].complete()
        expectEqual(chains.map(\.started.value), [1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
        expectEqual(queue.status.runningCount, 3)
        for chain in chains { chain.complete() }
        expectTrue(chains.allSatisfy { $0.started.value == 1 })
        expectEqual(queue.status.runningCount, 0)
    }

    @Test func theCapHoldsUnderConcurrency() {
        let queue = ChainQueue<Int>(maxConcurrent: 2)
        let tracker = Tracker()
        let done = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            done.enter()
            queue.enqueue(makeTrackedChain(key: index, sequence: index, tracker: tracker), for: index)
                .start(Observer { event in if event.isTerminating { done.leave() } })
        }
        expectEqual(done.wait(timeout: .now() + patience), .success)
        expectLessThanOrEqual(tracker.maxTotalInside, 2)
    }

    @Test func aDisposedWaitingChainNeverStarts() {
        let queue = ChainQueue<String>()
        let first = ManualChain()
        let second = ManualChain()
        let third = ManualChain()
        let secondRecorder = EventRecorder<Int, Never>()
        queue.enqueue(first.signal, for: "a").start(Observer())
        let disposable = queue.enqueue(second.signal, for: "a").start(secondRecorder.observer)
        queue.enqueue(third.signal, for: "a").start(Observer())
        disposable.dispose()
        expectEqual(secondRecorder.events, [.interrupted])
        first.complete()
        expectEqual(second.started.value, 0)
        expectEqual(third.started.value, 1)
    }

    @Test func disposingARunningChainLetsTheNextStart() {
        let queue = ChainQueue<String>()
        let first = ManualChain()
        let second = ManualChain()
        let disposable = queue.enqueue(first.signal, for: "a").start(Observer())
        queue.enqueue(second.signal, for: "a").start(Observer())
        disposable.dispose()
        expectEqual(second.started.value, 1)
    }

    @Test func aFailingChainStillLetsTheNextStart() {
        let queue = ChainQueue<String>()
        let recorder = EventRecorder<Int, TestError>()
        queue.enqueue(Signal(error: .boom), for: "a").start(recorder.observer)
        let second = EventRecorder<Int, TestError>()
        queue.enqueue(Signal(value: 2), for: "a").start(second.observer)
        expectEqual(recorder.events, [.failed(.boom)])
        expectEqual(second.events, [.value(2), .completed])
    }

    @Test func manySynchronousChainsDoNotRecurse() {
        let queue = ChainQueue<Int>()
        let blocker = ManualChain()
        queue.enqueue(blocker.signal, for: 0).start(Observer())
        let completed = Counter()
        for value in 0..<10_000 {
            queue.enqueue(Signal<Int, Never>(value: value), for: 0)
                .start(Observer(completed: { completed.increment() }))
        }
        blocker.complete()
        expectEqual(completed.value, 10_000)
    }

    @Test func neverInterleavesChainsWithTheSameKeyUnderAThousandConcurrentSubmissions() {
        let queue = ChainQueue<Int>()
        let tracker = Tracker()
        let done = DispatchGroup()
        let threads = 8
        let perThread = 125
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                let key = index % 5
                let sequence = thread * 1_000 + index
                done.enter()
                queue.enqueue(makeTrackedChain(key: key, sequence: sequence, tracker: tracker), for: key)
                    .start(Observer { event in if event.isTerminating { done.leave() } })
            }
        }
        expectEqual(done.wait(timeout: .now() + patience), .success)
        expectEqual(tracker.overlaps, 0)
        let starts = tracker.starts
        expectEqual(starts.values.map(\.count).reduce(0, +), threads * perThread)
        // Per key, each thread's chains started in the order that thread submitted them.
        for sequences in starts.values {
            for thread in 0..<threads {
                let mine = sequences.filter { $0 / 1_000 == thread }
                expectEqual(mine, mine.sorted())
            }
        }
        // An observer sees its chain's terminal event before the queue frees the chain's slot (so the next
        // chain never starts before the previous one's observer has heard the end): the last slots are freed
        // just after `done` is reached.
        expectTrue(waitUntil(seconds: 10) { queue.status.runningCount == 0 })
        expectEqual(queue.status.waitingCount, 0)
    }

    private func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1_000)
        }
        return true
    }
}
