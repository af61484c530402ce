import ContextBusReactive
import ContextBusWire

/// Waits `ms` on the scheduler, no BlueZ call. It is as long as it says, so the step timeout does not bound it (the
/// chain's does); a link loss fails it.
extension WaitStep: RunnableStep {
    var isBoundedByStepTimeout: Bool { false }

    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        Signal(value: finished(in: context))
            .delay(.milliseconds(ms), on: context.scheduler)
            .failingOnLinkLoss(in: context)
    }
}
