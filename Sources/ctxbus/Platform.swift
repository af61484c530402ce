// The one platform import block of ctxbus, and its only C calls: the standard streams and the exit. Linux (Glibc)
// only: we add no branches we cannot test.
#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("ctxbus supports Linux (Glibc) only")
#endif

/// Standard output or standard error, written through the C library's buffers.
enum StandardStream: Sendable {
    case output, error

    /// Whether the stream is a terminal (`isatty`).
    var isTerminal: Bool { isatty(self == .output ? 1 : 2) == 1 }

    /// Writes `text`, and flushes the stream so that a reader sees it at once.
    func write(_ text: String) {
        let stream = self == .output ? stdout : stderr
        fputs(text, stream)
        fflush(stream)
    }
}

/// Ends the process at once with `status` (`exit`).
func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
