// The one platform import block of ContextBusDBus. Linux (Glibc) only: we add no branches we cannot test.
// The only other file that calls C is DBusSocket.swift (the socket, `sockaddr_un`), which imports Glibc plainly; the
// rest of the module sees the Swift wrappers there and below.
#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("ContextBus's D-Bus client supports Linux (Glibc) only")
#endif

/// Whether an error number means a receive timeout expired (`EAGAIN`/`EWOULDBLOCK` after `SO_RCVTIMEO`).
func isReceiveTimeout(_ code: Int32) -> Bool {
    code == EAGAIN || code == EWOULDBLOCK
}

/// Whether `bytes` holds a NUL byte (`memchr`, which scans a word at a time).
@inline(__always)
func containsNUL(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = bytes.baseAddress else { return false }
    return memchr(base, 0, bytes.count) != nil
}
