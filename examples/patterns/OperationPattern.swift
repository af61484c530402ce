import ContextBus
import ContextBusClient
import Dispatch
import Foundation

/// Pattern 3, a `ContextOperation` with a save block and a completion, and one cancelled mid-way.
///
/// Both run on one `OperationQueue`, one at a time. The first renames the imported devices in two steps on its own
/// private context, saves into the root (main merges it), and its save block writes the root to storesvc; its
/// completion reports the outcome. The second inserts a device in its first step and is cancelled while that step
/// runs: the operation checks `isCancelled` before its next step, so the second step never runs, nothing is saved and
/// the context is rolled back; its save block is not called, its completion says `cancelled`, and storesvc never
/// hears of the device.
struct OperationPattern {
    let stack: ContextStack
    let store: RemoteStore
    /// The imported devices.
    let devices: [ObjectID]

    static let cancelledAddress = "FE:ED:00:00:00:FF"

    func run() throws {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let stack = self.stack
        let devices = self.devices
        let renamed = ContextOperation(
            parent: stack.root, mergingInto: stack.main, name: "renamer",
            steps: [
                { context in
                    for device in context.objects(with: devices, as: Device.self) {
                        device.name = (device.name ?? "device") + " (checked)"
                    }
                },
                { context in
                    for device in context.objects(with: devices, as: Device.self) { device.connected = false }
                },
            ],
            saveBlock: { changes in  // after main merged the save; on the operation's context's queue
                try stack.saveRoot()
                say(
                    "patterns: operation: save block: \(changes.updated.count) devices updated, root written to storesvc"
                )
            },
            completion: { outcome in say("patterns: operation: completion: \(outcome)") })

        let stepStarted = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        let secondStepRan = Locked(false)
        let doomed = ContextOperation(
            parent: stack.root, mergingInto: stack.main, name: "doomed",
            steps: [
                { context in
                    let device = context.insert(Device.self)
                    device.address = Self.cancelledAddress
                    device.name = "never saved"
                    stepStarted.signal()
                    cancelled.wait()  // the cancel arrives while this step runs
                },
                { _ in secondStepRan.withLock { $0 = true } },
            ],
            saveBlock: { _ in say("patterns: operation: the cancelled operation's save block ran (it must not)") },
            completion: { outcome in say("patterns: operation: completion of the cancelled one: \(outcome)") })
        queue.addOperation(renamed)
        queue.addOperation(doomed)
        guard stepStarted.wait(timeout: .now() + 30) == .success else {
            throw DemoFailure(description: "the second operation did not start")
        }
        doomed.cancel()
        cancelled.signal()
        queue.waitUntilAllOperationsAreFinished()  // on the demo's thread: never on main, which the operations need

        guard case .saved = renamed.outcome, case .cancelled = doomed.outcome, !secondStepRan.withLock({ $0 }) else {
            throw DemoFailure(description: "operations ended \(renamed.outcome.debugText), \(doomed.outcome.debugText)")
        }
        var counting = try Device.fetchRequest(where: "address == $a", ["a": .string(Self.cancelledAddress)]).request
        counting.resultType = .count
        guard case .count(let cancelledInStore) = try store.fetch(counting).content else {
            throw DemoFailure(description: "storesvc did not count")
        }
        let names = stack.main.performAndWait {
            stack.main.objects(with: devices, as: Device.self).compactMap(\.name)
        }
        say(
            "patterns: operation: cancelled after its first step: the second never ran, nothing saved "
                + "(storesvc holds \(cancelledInStore) devices \(Self.cancelledAddress)); "
                + "main shows \(names.sorted().joined(separator: ", "))")
    }
}
