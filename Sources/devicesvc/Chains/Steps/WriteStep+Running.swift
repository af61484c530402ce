import ContextBusReactive
import ContextBusWire

/// `GattCharacteristic1.WriteValue` as a request or a command, retried. A link loss fails it.
extension WriteStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        context.backend.write(
            value, to: characteristic, of: context.address, onAdapter: context.adapter, withResponse: response,
            callTimeout: context.timeout
        )
        .retrying(in: context)
        .map { finished(in: context) }
        .failingOnLinkLoss(in: context)
    }
}
