import BusProtocol
import Foundation

/// `ctxbus`, the ContextBus command-line client. See `ctxbus --help` and docs/cli.md.

// Before any thread exists, so that every thread inherits the mask and SIGINT/SIGTERM reach the
// signal sources (see ServiceSignals).
ServiceSignals.blockInEveryNewThread()

let tool = CommandLineTool(environment: ProcessInfo.processInfo.environment)
exit(tool.main(Array(CommandLine.arguments.dropFirst())))
