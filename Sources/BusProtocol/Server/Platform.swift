// The one platform import block of ContextBusServer, and its only C calls. Linux (Glibc) only: we add no branches
// we cannot test.
import ContextBusSupport

#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("ContextBus supports Linux (Glibc) only")
#endif

/// Writes `line` to standard error with one `write(2)` (retried where it wrote a part), so a pipe or the journal's
/// stream gets each line whole even when several threads log at once.
func writeLineToStandardError(_ line: String) {
    let bytes = Array(line.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { raw in
            retryingInterrupts { write(2, raw.baseAddress! + offset, raw.count - offset) }
        }
        guard written > 0 else { return }
        offset += written
    }
}

/// The device and inode of standard error (`fstat(2)`), or `nil` when it is closed.
func standardErrorFileIdentity() -> (device: UInt64, inode: UInt64)? {
    var status = stat()
    guard fstat(2, &status) == 0 else { return nil }
    return (UInt64(status.st_dev), UInt64(status.st_ino))
}

/// The user and system CPU time this process has spent, in seconds (`getrusage(2)`), or `nil` if unreadable.
func processCPUSeconds() -> Double? {
    var usage = rusage()
    guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return nil }
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
        + Double(usage.ru_stime.tv_usec) / 1e6
}
