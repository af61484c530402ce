import ContextBus
import Foundation

/// Prints one whole line at once, flushed (the demo's lines come from several queues; scripts/run-check reads them as
/// they come).
func say(_ line: String) {
    output.withLock { _ in
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}

private let output = Locked(())
