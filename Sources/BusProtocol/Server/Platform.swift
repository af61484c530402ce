// The one platform import block of ContextBusServer, and its only C calls. Linux (Glibc) only: we add no branches
// we cannot test.
#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("ContextBus supports Linux (Glibc) only")
#endif

/// Writes `text` to standard error (`fputs`, through the C library's buffer as `print` does for standard output).
func writeToStandardError(_ text: String) {
    fputs(text, stderr)
}
