extension Signal {
    /// Collects every value into one array, sent when the signal completes (an empty array if it sent none).
    ///
    /// A failure or interruption is passed on and the collected values are discarded.
    @inlinable
    public func collect() -> Signal<[Value], Failure> {
        reduce(into: []) { values, value in values.append(value) }
    }
}
