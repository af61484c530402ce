import ContextBusReactive
import ContextBusWire

/// `GattCharacteristic1.ReadValue`, retried; its result carries the value read. A link loss fails it.
extension ReadStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        context.backend.read(
            characteristic, of: context.address, onAdapter: context.adapter, callTimeout: context.timeout
        )
        .retrying(in: context)
        .map { finished(in: context, value: $0, decodedAs: characteristic) }
        .failingOnLinkLoss(in: context)
    }
}
