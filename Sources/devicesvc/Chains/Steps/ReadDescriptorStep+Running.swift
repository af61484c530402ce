import ContextBusReactive
import ContextBusWire

/// `GattDescriptor1.ReadValue`, retried; its result carries the value read (not decoded: the formats are
/// characteristics'). A link loss fails it.
extension ReadDescriptorStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        context.backend.readDescriptor(
            descriptor, of: characteristic, of: context.address, onAdapter: context.adapter,
            callTimeout: context.timeout
        )
        .retrying(in: context)
        .map { finished(in: context, value: $0) }
        .failingOnLinkLoss(in: context)
    }
}
