import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// `devicesvc`: parse the command line, start the service, serve until SIGTERM/SIGINT.

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

let log = ServiceLog(program: "devicesvc", level: configuration.logLevel, format: configuration.operations.logFormat)
let service = Locked<DeviceService?>(nil)
// The handler runs once, on a queue of its own; the process exits 0 when it returns.
ShutdownSignals.install { signal in
    log.info("signal \(signal == SIGTERM ? "TERM" : "INT"): cancelling chains and stopping")
    let stopped = DispatchSemaphore(value: 0)
    Task {
        await service.withLock { $0 }?.stop()
        stopped.signal()
    }
    stopped.wait()
}
// Detached: top-level code is main-actor isolated, and the main thread blocks below.
Task.detached {
    do {
        let started = try await DeviceService.start(configuration: configuration, log: log)
        service.withLock { $0 = started }
    } catch {
        log.error("\(error)")
        exit(1)
    }
}
// The main thread stays alive, blocked, until the handler exits the process. Not `dispatchMain()`: on Linux it
// ends the main thread with `pthread_exit`, and a signal then delivered to it runs on a stack whose abandoned
// frames the address sanitizer still has marked (ShutdownSignals' documentation).
DispatchSemaphore(value: 0).wait()
