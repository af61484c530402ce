import ContextBus
import ContextBusClient
import Dispatch
import Foundation

// `patterns`: the seeds' five patterns in Swift, across processes, on the running stack (storesvc and devicesvc);
// scripts/run runs it as its demo. See examples/patterns/README.md for what each part shows.
//
//   patterns [--store SOCKET] [--device SOCKET] [--rounds N] [--seconds N]
//
// The demo runs on a thread of its own, because a RemoteStore's calls block the calling thread (a context's queue,
// never the cooperative pool), while the main thread runs the main dispatch queue: `ContextStack.main` is a
// `.mainQueue` context, as a Core Data app's view context is.

let options: DemoOptions
do {
    options = try DemoOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("patterns: \(error)\n\(DemoOptions.usage)\n".utf8))
    exit(64)
}
Thread {
    exit(PatternsDemo(options: options).run())
}.start()
dispatchMain()
