import ContextBusReactive
import ContextBusSupport
import ContextBusWire
import Foundation

/// `StartNotify`, then `count` notifications, each sent on as it arrives, then the step's result with all of them;
/// `StopNotify` as the step ends, also when it fails. Not retried; a link loss fails it (the notifications received
/// were sent on already).
extension NotifyStep: RunnableStep {
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError> {
        let notifications = context.backend.notifications(
            characteristic, of: context.address, onAdapter: context.adapter, callTimeout: context.timeout
        ).take(first: count)
        let step = context.index
        let decoders = context.decoders
        let characteristic = characteristic
        let collected = Signal<ChainProgress, DeviceError> { observer, lifetime in
            let values = Locked([Data]())
            lifetime += notifications.start { event in
                switch event {
                case .value(let value):
                    values.withLock { $0.append(value) }
                    observer.send(
                        value: .notification(
                            step: step, value: value, measurement: decoders.decode(value, of: characteristic)))
                case .completed:
                    observer.send(
                        value: finished(in: context, values: values.withLock { $0 }, decodedAs: characteristic))
                    observer.sendCompleted()
                case .failed(let error):
                    observer.send(error: error)
                case .interrupted:
                    observer.sendInterrupted()
                }
            }
        }
        return collected.failingOnLinkLoss(in: context)
    }
}
