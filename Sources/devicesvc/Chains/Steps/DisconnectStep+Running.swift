import ContextBusReactive
import ContextBusWire

/// `Device1.Disconnect`, retried (a device BlueZ does not know counts as disconnected). Once it has succeeded, a later
/// failure of the chain needs no disconnect of its own (until the next connect). On a device a watch holds the link
/// of, it makes no call and leaves the link up (`device.watch`: chains share the watch's link).
extension DisconnectStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        if context.isLinkHeld() { return Signal(value: finished(in: context)) }
        return context.backend.disconnect(context.address, onAdapter: context.adapter, callTimeout: context.timeout)
            .retrying(in: context)
            .on(value: { context.record.disconnected() })
            .map { finished(in: context) }
    }
}
