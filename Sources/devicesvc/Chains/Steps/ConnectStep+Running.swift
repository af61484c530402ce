import ContextBusReactive
import ContextBusWire

/// `Device1.Connect`, then `ServicesResolved`; each attempt waits for one of the adapter's link set-up turns
/// (`DeviceBackend.connectTakingATurn`), and each retry takes a new turn (other devices may connect during the
/// backoff). The result carries the link's MTU when BlueZ reports one.
extension ConnectStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        let record = context.record
        return context.backend.connectTakingATurn(
            context.address, onAdapter: context.adapter, turns: context.connections,
            resolveTimeout: min(context.settings.resolveTimeout, context.timeout), callTimeout: context.timeout,
            onAttempt: { record.connectAttempted() }
        )
        .retrying(in: context)
        .map { finished(in: context, mtu: context.mtu) }
    }
}
