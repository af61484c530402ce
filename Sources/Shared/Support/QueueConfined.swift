import Dispatch

/// A reference that may only be used on one serial dispatch queue.
///
/// `@unchecked Sendable` because the box itself never touches `value`: every reader goes through
/// `value`, which (in debug builds) traps unless the caller runs on the queue identified by
/// `key`. All users run on that queue (`ObjectContext.perform…`), so the wrapped non-Sendable
/// state is never touched by two threads at once.
package final class QueueConfined<Value: AnyObject>: @unchecked Sendable {
    private let wrapped: Value
    private let key: DispatchSpecificKey<UInt8>
    private let label: String

    package init(_ value: Value, key: DispatchSpecificKey<UInt8>, label: String) {
        self.wrapped = value
        self.key = key
        self.label = label
    }

    /// The confined value; debug builds check that the caller runs on the owning queue.
    package var value: Value {
        #if DEBUG
        precondition(
            DispatchQueue.getSpecific(key: key) != nil,
            "\(label) used outside its queue: wrap the call in perform / performAndWait")
        #endif
        return wrapped
    }
}
