import Dispatch

/// A dispatch source held in `Sendable` state.
///
/// `@unchecked Sendable` because libdispatch objects are thread-safe: `resume`, `cancel` and
/// the setters may be called from any thread (the Swift overlay just does not mark the source
/// protocols `Sendable`). The box only stores the reference.
package final class DispatchSourceBox: @unchecked Sendable {
    package let source: any DispatchSourceProtocol

    package init(_ source: any DispatchSourceProtocol) {
        self.source = source
    }
}
