import ContextBusReactive
import Dispatch
import Synchronization

/// `scripts/bench reactive`: the cost of the reactive core's hot path, against a plain loop doing the same work.
///
/// Work per input value: multiply by 3, keep it if even, map it to one inner value (+1), collect into an array.
/// Each row is the best of several rounds (least disturbed by other processes on a shared machine).
enum ReactiveBenchmark {
    static let count = 1_000_000
    static let rounds = 7

    static func run() throws {
        print("reactive: \(count) values per round, best of \(rounds) rounds")
        let loop = best { plainLoop() }
        let chain = best { operatorChain(inner: { Signal(value: $0 &+ 1) }) }
        let producerChain = best {
            operatorChain(inner: { value in
                Signal { observer, _ in
                    observer.send(value: value &+ 1)
                    observer.sendCompleted()
                }
            })
        }
        guard loop.checksum == chain.checksum, loop.checksum == producerChain.checksum else {
            throw BenchmarkFailure(
                message: "results differ: \(loop.checksum) \(chain.checksum) \(producerChain.checksum)")
        }
        let deliverCount = 200_000
        let direct = best { deliver(deliverCount, hop: false) }
        let hop = best { deliver(deliverCount, hop: true) }

        func rate(_ seconds: Double, _ events: Int) -> String { format(Double(events) / seconds / 1e6, "M events/s") }
        func perEvent(_ seconds: Double, _ events: Int) -> String { format(seconds / Double(events) * 1e9, "ns/event") }
        let rows: [(String, String, String)] = [
            ("plain closure loop (ceiling)", rate(loop.seconds, count), perEvent(loop.seconds, count)),
            (
                "start→map→filter→flatMap(.concat, Signal(value:))→collect", rate(chain.seconds, count),
                perEvent(chain.seconds, count)
            ),
            (
                "same, inner = Signal { observer, lifetime in … }", rate(producerChain.seconds, count),
                perEvent(producerChain.seconds, count)
            ),
            (
                "values→start, no hop (\(deliverCount))", rate(direct.seconds, deliverCount),
                perEvent(direct.seconds, deliverCount)
            ),
            (
                "values→deliver(on: QueueScheduler)", rate(hop.seconds, deliverCount),
                perEvent(hop.seconds, deliverCount)
            ),
        ]
        for (name, eventsPerSecond, nanoseconds) in rows {
            print(pad(name, 62) + pad(eventsPerSecond, 20) + nanoseconds)
        }
        print(
            "chain / loop: \(format(chain.seconds / loop.seconds, "×"))   "
                + "deliver(on:) cost: \(format((hop.seconds - direct.seconds) / Double(deliverCount) * 1e9, "ns/event"))"
        )
    }

    struct Measurement {
        var seconds: Double
        var checksum: Int
    }

    struct BenchmarkFailure: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    static func best(_ body: () -> Measurement) -> Measurement {
        var best = body()
        for _ in 1..<rounds {
            let next = body()
            if next.seconds < best.seconds { best = next }
        }
        return best
    }

    /// The ceiling: the same work with closures in a plain loop (closures opaque to the optimiser, as
    /// operator closures are).
    @inline(never)
    static func plainLoop() -> Measurement {
        let transform = opaque { (value: Int) in value &* 3 }
        let isIncluded = opaque { (value: Int) in value % 2 == 0 }
        let inner = opaque { (value: Int) in value &+ 1 }
        let start = DispatchTime.now()
        var collected: [Int] = []
        for value in 0..<count {
            let mapped = transform(value)
            if isIncluded(mapped) { collected.append(inner(mapped)) }
        }
        let seconds = elapsed(since: start)
        return Measurement(seconds: seconds, checksum: checksum(collected))
    }

    @inline(never)
    static func operatorChain(inner: @escaping @Sendable (Int) -> Signal<Int, Never>) -> Measurement {
        let result = Mutex<[Int]>([])
        let start = DispatchTime.now()
        Signal<Int, Never>(values: 0..<count)
            .map { $0 &* 3 }
            .filter { $0 % 2 == 0 }
            .flatMap(.concat, inner)
            .collect()
            .startWithValues { values in result.withLock { $0 = values } }
        let seconds = elapsed(since: start)
        return Measurement(seconds: seconds, checksum: checksum(result.withLock { $0 }))
    }

    @inline(never)
    static func deliver(_ count: Int, hop: Bool) -> Measurement {
        let scheduler = QueueScheduler(name: "bench.deliver")
        let sum = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        let start = DispatchTime.now()
        let values = Signal<Int, Never>(values: 0..<count)
        (hop ? values.deliver(on: scheduler) : values)
            .reduce(0) { $0 &+ $1 }
            .start(Observer(value: { total in sum.withLock { $0 = total } }, completed: { done.signal() }))
        done.wait()
        let seconds = elapsed(since: start)
        return Measurement(seconds: seconds, checksum: sum.withLock { $0 })
    }

    @inline(never)
    static func opaque<T>(_ value: T) -> T { value }

    static func checksum(_ values: [Int]) -> Int {
        values.reduce(values.count, &+)
    }

    static func elapsed(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    static func format(_ value: Double, _ unit: String) -> String {
        let rounded = (value * 100).rounded() / 100
        return "\(rounded) \(unit)"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }
}
