import ContextBusReactive
import ContextBusWire
import Foundation

/// A kind of step as devicesvc runs it: its work on the device, and what it reports.
///
/// Every kind of `ChainStep.kinds` conforms, in a file of its own here (`ReadStep+Running.swift`, …), next to the
/// wire's file for the kind (`Sources/BusProtocol/Wire/Methods/ChainSteps/`). The chain runner gives each step its
/// timeout, turns its failures into the chain's, and records its result; everything that differs between kinds is in
/// its `run(in:)`:
///
/// - what it asks of BlueZ, with or without retries, and whether a link loss fails it;
/// - its progress: `ChainProgress.notification`s as they arrive (a notify step's), then `.finished` with the step's
///   `StepResult` — a read's carries the value it read, a notify's the values it received. What the `device.step`
///   events and a recording carry follows from these (`ChainProgress.value`).
protocol RunnableStep: StepKind {
    /// Whether the step's timeout bounds the step (the chain's timeout bounds every step). True unless a kind says
    /// otherwise.
    var isBoundedByStepTimeout: Bool { get }

    /// The step's work, started when its turn in the chain has come: its progress, ending with `.finished`, or the
    /// failure that ends it.
    func run(in context: StepContext) -> Signal<ChainProgress, DeviceError>
}

extension RunnableStep {
    var isBoundedByStepTimeout: Bool { true }

    /// The progress that ends this step, with what it produced; `value` and `values` decoded as the values of
    /// `decodedAs` when the service knows that characteristic's format.
    func finished(
        in context: StepContext, value: Data? = nil, values: [Data]? = nil, decodedAs uuid: BluetoothUUID? = nil,
        mtu: Int? = nil
    ) -> ChainProgress {
        var result = StepResult(step: context.index, operation: Self.operation, value: value, values: values, mtu: mtu)
        if let uuid, let entry = context.decoders.entry(for: uuid) {
            result.number = value.flatMap { entry.format.decode(Array($0)) }
            result.numbers = values?.map { entry.format.decode(Array($0)) }
            if result.number != nil || result.numbers?.contains(where: { $0 != nil }) == true {
                result.unit = entry.unit
            }
        }
        return .finished(result)
    }
}

extension ChainStep {
    /// The step as devicesvc runs it.
    ///
    /// Every kind of step runs (`RunnableStepTests` checks each kind of `ChainStep.kinds`): one that does not is a
    /// programmer error, and traps.
    var runnable: any RunnableStep {
        guard let runnable = kind as? any RunnableStep else {
            fatalError("devicesvc cannot run '\(operation.rawValue)' steps: \(type(of: kind)) is not a RunnableStep")
        }
        return runnable
    }
}
