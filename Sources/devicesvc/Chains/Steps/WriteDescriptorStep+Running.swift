import ContextBusReactive
import ContextBusWire

/// `GattDescriptor1.WriteValue`, retried. A link loss fails it.
extension WriteDescriptorStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        context.backend.writeDescriptor(
            value, to: descriptor, of: characteristic, of: context.address, onAdapter: context.adapter,
            callTimeout: context.timeout
        )
        .retrying(in: context)
        .map { finished(in: context) }
        .failingOnLinkLoss(in: context)
    }
}
