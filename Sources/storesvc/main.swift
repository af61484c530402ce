import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// `storesvc`: parse the command line, open the service, serve until SIGTERM/SIGINT.

let outcome: StoreServiceConfiguration.Outcome
do {
    outcome = try StoreServiceConfiguration.parse(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
} catch {
    ServiceLog.printError("\(error)", program: "storesvc")
    exit(ConfigurationError.exitStatus)
}
guard case .run(let configuration) = outcome else {
    print(StoreServiceCommand.usage)
    exit(0)
}
if configuration.checksMigration { exit(MigrationCheck.run(configuration)) }

let log = ServiceLog(program: "storesvc", level: configuration.logLevel, format: configuration.operations.logFormat)

// Watch the signals before the socket exists: whoever sees the socket may signal at once.
let stopRequested = DispatchSemaphore(value: 0)
let signals = ShutdownSignals.install(exitsAfterHandler: false) { signal in
    log.info("signal \(signal): stopping")
    stopRequested.signal()
}

let service: StoreService
do {
    service = try StoreService(configuration: configuration, log: log)
    try service.start()
} catch StoreServiceError.retention(let problem) {
    ServiceLog.printError(problem, program: "storesvc")
    exit(ConfigurationError.exitStatus)
} catch {
    log.error("\(error)")
    exit(error.exitStatus)
}

stopRequested.wait()
// Detached: top-level code is main-actor isolated, and the main thread is about to block.
let stopped = DispatchSemaphore(value: 0)
Task.detached {
    await service.stop()
    stopped.signal()
}
stopped.wait()
signals.cancel()
exit(0)
