/// A growable FIFO ring buffer: amortised O(1) `append` and `popFirst`, no per-element allocation.
@usableFromInline
struct RingBuffer<Element> {
    @usableFromInline
    var storage: [Element?] = []
    @usableFromInline
    var head = 0
    @usableFromInline
    var count = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { count == 0 }

    @inlinable
    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    @inlinable
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    @inlinable
    var first: Element? { count > 0 ? storage[head] : nil }

    /// Removes the first element matching `predicate`; returns it, or nil if none matched.
    @inlinable
    mutating func removeFirst(where predicate: (Element) -> Bool) -> Element? {
        for offset in 0..<count {
            let index = (head + offset) % storage.count
            guard let element = storage[index], predicate(element) else { continue }
            // Shift the later elements one place towards the head.
            for later in offset..<(count - 1) {
                storage[(head + later) % storage.count] = storage[(head + later + 1) % storage.count]
            }
            storage[(head + count - 1) % storage.count] = nil
            count -= 1
            return element
        }
        return nil
    }

    @inlinable
    mutating func removeAll() -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(count)
        while let element = popFirst() { elements.append(element) }
        storage = []
        head = 0
        return elements
    }

    @inlinable
    mutating func grow() {
        var grown = [Element?](repeating: nil, count: Swift.max(8, storage.count * 2))
        for offset in 0..<count { grown[offset] = storage[(head + offset) % storage.count] }
        storage = grown
        head = 0
    }
}
extension RingBuffer: Sendable where Element: Sendable {}
