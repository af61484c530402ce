import ContextBusReactive
import ContextBusWire

/// What a running step works with: which step of the chain it is, the device, its timeout, and the chain runner's
/// means (the backend, the scheduler, the settings, the adapter's link set-up turns).
struct StepContext: Sendable {
    /// The step's 0-based index in the chain.
    let index: Int
    let address: BluetoothAddress
    /// The step's own `timeoutMs`, else `--step-timeout-ms`: also the timeout of each BlueZ call it makes.
    let timeout: Duration
    let backend: any DeviceBackend
    let scheduler: any Scheduler
    let settings: ChainSettings
    /// What the chain has done so far (a connect step tells it a `Connect` went out, a disconnect step that it ended).
    let record: ChainRecord
    /// The adapter's link set-up turns, keyed by device: at most `settings.concurrentConnects` at once, in the order
    /// they were asked for.
    let connections: ChainQueue<String>
    /// Tells about a retry (for the log).
    let onRetry: (@Sendable (DeviceError, Int) -> Void)?
    /// The formats values are decoded with.
    let decoders: CharacteristicDecoders
    /// The adapter the chain uses (its `adapter`, else `--adapter`).
    let adapter: String
    /// Whether a watch holds the device's link now: a chain on a watched device uses that link and leaves it up.
    let isLinkHeld: @Sendable () -> Bool
}

extension StepContext {
    /// The ATT MTU of the device's link, as BlueZ reports it (on its characteristics) now.
    var mtu: Int? {
        guard let tree = try? backend.availableTree(), let devicePath = tree.devicePath(address, onAdapter: adapter)
        else { return nil }
        return tree.mtu(onDevice: devicePath)
    }
}

extension Signal where Failure == DeviceError {
    /// The signal started again after a transient failure, as `--retry` says.
    func retrying(in context: StepContext) -> Signal {
        retrying(context.settings.retry, on: context.scheduler, onRetry: context.onRetry)
    }

    /// The signal, failing as soon as the device's link drops (or BlueZ goes away).
    func failingOnLinkLoss(in context: StepContext) -> Signal {
        failing(whenever: context.backend.linkLoss(context.address, onAdapter: context.adapter))
    }
}
