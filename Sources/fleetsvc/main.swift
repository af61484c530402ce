import ContextBusServer
import ContextBusSupport
import Dispatch
import Foundation

/// `fleetsvc`: parse the command line, start the bridge, serve until SIGTERM/SIGINT.

let environment = ProcessInfo.processInfo.environment
let outcome: FleetServiceConfiguration.Outcome
do {
    outcome = try FleetServiceConfiguration.parse(
        arguments: Array(CommandLine.arguments.dropFirst()), environment: environment)
} catch {
    ServiceLog.printError("\(error)", program: "fleetsvc")
    exit(ConfigurationError.exitStatus)
}
guard case .run(let configuration) = outcome else {
    print(FleetServiceCommand.usage)
    exit(0)
}

let log = ServiceLog(program: "fleetsvc", level: configuration.logLevel, format: configuration.operations.logFormat)
let service = Locked<FleetService?>(nil)
// The handler runs once, on a queue of its own; the process exits 0 when it returns.
ShutdownSignals.install { signal in
    log.info("signal \(signal == SIGTERM ? "TERM" : "INT"): stopping")
    let stopped = DispatchSemaphore(value: 0)
    Task {
        await service.withLock { $0 }?.stop()
        stopped.signal()
    }
    stopped.wait()
}
Task.detached {
    do {
        let started = try await FleetService.start(configuration: configuration, log: log, environment: environment)
        service.withLock { $0 = started }
    } catch {
        log.error("\(error)")
        exit(1)
    }
}
// Blocked until the signal handler exits the process (see devicesvc's main.swift for why not dispatchMain()).
DispatchSemaphore(value: 0).wait()
