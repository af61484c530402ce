import Foundation

@testable import ContextBusClient
@testable import ContextBusReactive
@testable import ContextBusSupport
@testable import ContextBusWire

/// A client's `device.value` and `device.link` events, in arrival order, with when each arrived.
final class WatchEventLog: Sendable {
    enum Entry: Sendable {
        case value(DeviceValueEvent)
        case link(DeviceLinkEvent)
    }

    private let entries = Locked([(entry: Entry, at: ContinuousClock.Instant)]())
    private let observations = Locked([any Disposable]())

    init(_ client: BusClient) {
        let values = client.events(DeviceValueEvent.self).startWithValues { [entries] event in
            entries.withLock { $0.append((.value(event), .now)) }
        }
        let links = client.events(DeviceLinkEvent.self).startWithValues { [entries] event in
            entries.withLock { $0.append((.link(event), .now)) }
        }
        observations.withLock { $0 = [values, links] }
    }

    func dispose() {
        for observation in observations.withLock({ $0 }) { observation.dispose() }
    }

    var all: [(entry: Entry, at: ContinuousClock.Instant)] { entries.withLock { $0 } }

    /// The values of watch `watch` (all watches when `nil`).
    func values(of watch: Int64? = nil) -> [DeviceValueEvent] {
        all.compactMap { item in
            guard case .value(let event) = item.entry, watch == nil || event.watch == watch else { return nil }
            return event
        }
    }

    /// The link events of watch `watch`, with when they arrived.
    func links(of watch: Int64? = nil) -> [(event: DeviceLinkEvent, at: ContinuousClock.Instant)] {
        all.compactMap { item in
            guard case .link(let event) = item.entry, watch == nil || event.watch == watch else { return nil }
            return (event, item.at)
        }
    }

    /// The states of watch `watch`'s link events, in order.
    func states(of watch: Int64? = nil) -> [DeviceLinkEvent.State] { links(of: watch).map(\.event.state) }
}

/// Waits until `condition` holds (a guard against hanging, not a timing assertion).
func waitUntil(
    _ what: String = "the condition", seconds: Int = 20, _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitError.timedOut(what) }
        try await Task.sleep(for: .milliseconds(10))
    }
}

enum WaitError: Error, CustomStringConvertible {
    case timedOut(String)

    var description: String {
        switch self {
        case .timedOut(let what): return "timed out waiting for \(what)"
        }
    }
}
