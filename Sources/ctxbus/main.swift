import Foundation

/// `ctxbus`, the ContextBus command-line client. See `ctxbus --help` and docs/cli.md.

let tool = CommandLineTool(environment: ProcessInfo.processInfo.environment)
exit(tool.main(Array(CommandLine.arguments.dropFirst())))
