import ContextBusReactive
import ContextBusWire

/// `Device1.Disconnect`, retried (a device BlueZ does not know counts as disconnected). Once it has succeeded, a later
/// failure of the chain needs no disconnect of its own (until the next connect).
extension DisconnectStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        context.backend.disconnect(context.address, onAdapter: context.adapter, callTimeout: context.timeout)
            .retrying(in: context)
            .on(value: { context.record.disconnected() })
            .map { finished(in: context) }
    }
}
