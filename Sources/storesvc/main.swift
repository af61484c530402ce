import BusProtocol
import Dispatch
import Foundation

/// `storesvc`: parse the command line, open the service, serve until SIGTERM/SIGINT.

// Before any thread exists, so that every thread inherits the mask (see ServiceSignals).
ServiceSignals.blockInEveryNewThread()

let outcome: StoreServiceConfiguration.Outcome
do {
    outcome = try StoreServiceConfiguration.parse(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    ServiceLog.printError("\(error)")
    exit(ConfigurationError.exitStatus)
}
guard case .run(let configuration) = outcome else {
    print(StoreServiceCommand.usage)
    exit(0)
}

let log = ServiceLog(level: configuration.logLevel)
let service: StoreService
do {
    service = try StoreService(configuration: configuration, log: log)
    try service.start()
} catch {
    log.error("\(error)")
    exit(1)
}

let stopping = DispatchQueue(label: "ContextBus.storesvc.stop")
let signals = ServiceSignals(queue: stopping) { signal in
    log.info("signal \(signal): stopping")
    let stopped = DispatchSemaphore(value: 0)
    Task {
        await service.stop()
        stopped.signal()
    }
    stopped.wait()
    exit(0)
}
withExtendedLifetime(signals) { dispatchMain() }
