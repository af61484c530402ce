import BusProtocol
import Dispatch
import Foundation
import Shared

/// `devicesvc`: parse the command line, start the service, serve until SIGTERM/SIGINT.

// Before any thread exists, so that every thread inherits the mask and the signals reach the dispatch sources.
ServiceSignals.blockInEveryNewThread()

let outcome: DeviceServiceConfiguration.Outcome
do {
    outcome = try DeviceServiceConfiguration.parse(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    ServiceLog.printError("\(error)", program: "devicesvc")
    exit(ConfigurationError.exitStatus)
}
guard case .run(let configuration) = outcome else {
    print(DeviceServiceCommand.usage)
    exit(0)
}

let log = ServiceLog(program: "devicesvc", level: configuration.logLevel)
let stopping = DispatchQueue(label: "devicesvc.stop")
let service = Locked<DeviceService?>(nil)
let signals = ServiceSignals(queue: stopping) { signal in
    log.info("signal \(signal == ServiceSignals.terminate ? "TERM" : "INT"): cancelling chains and stopping")
    let stopped = DispatchSemaphore(value: 0)
    Task {
        await service.withLock { $0 }?.stop()
        stopped.signal()
    }
    stopped.wait()
    exit(0)
}
Task {
    do {
        let started = try await DeviceService.start(configuration: configuration, log: log)
        service.withLock { $0 = started }
    } catch {
        log.error("\(error)")
        exit(1)
    }
}
withExtendedLifetime(signals) { dispatchMain() }
