#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("Unsupported platform")
#endif

/// Ends this process at once, as `kill -9` would (the fault-injection points of the tests).
func killThisProcess() {
    kill(getpid(), SIGKILL)
}
