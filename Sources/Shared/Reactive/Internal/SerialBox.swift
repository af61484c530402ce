/// Mutable state that belongs to one started signal's event stream (an operator's counter or buffer).
///
/// `@unchecked Sendable` because the reactive contract (docs/ReactiveContracts.md) makes the events of one
/// started signal serial: they are never delivered concurrently and never recursively, and every path that
/// delivers them (an `EventGate`, a `SerialDrain`, a serial scheduler, one producer thread) orders one delivery
/// before the next with release/acquire synchronisation. Code that touches a `SerialBox` outside event delivery
/// of its own signal is a bug.
@usableFromInline
final class SerialBox<Value>: @unchecked Sendable {
    @usableFromInline
    @exclusivity(unchecked)
    var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}
