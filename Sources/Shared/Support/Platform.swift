// The one platform import block of ContextBusSupport. Linux (Glibc) only: we add no branches we cannot test.
// The other files that call C directly import Glibc plainly, and are the module's edge: `Locked.swift` (the pthread
// mutex) and `ShutdownSignals.swift` (`sigaction`, the self-pipe). The other modules of the package call the
// helpers below instead of looping on `errno` themselves.
#if canImport(Glibc)
@preconcurrency import Glibc
#else
#error("ContextBus supports Linux (Glibc) only")
#endif

/// Runs a system call, again while it fails with `EINTR`: the one place in the package that retries interrupted
/// calls (STYLE.md, "EINTR is retried in exactly one helper").
///
/// ```swift
/// let count = retryingInterrupts { recv(fd, buffer, length, 0) }
/// if count == -1 { throw SystemError(errno: errno, operation: "recv") }
/// ```
///
/// - Parameter call: The call; it returns `-1` and sets `errno` on failure, as most of libc does. Not for calls that
///   return their error number (`pthread_*`), and never for `close`, which Linux completes even when it reports
///   `EINTR`.
/// - Returns: The call's result: what it returned, or `-1` with `errno` still set by the failure that was not
///   `EINTR`.
@inline(__always)
package func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) -> Result {
    while true {
        let result = call()
        if result == -1 && errno == EINTR { continue }
        return result
    }
}

/// The C library's text for an error number (`strerror`): "No such file or directory".
package func systemErrorMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// The calling thread, as the C library knows it.
@usableFromInline
package enum CurrentThread {
    /// An id of the calling thread (`pthread_self`): the same on every call from one thread, different for two
    /// threads that are alive at once.
    @inlinable
    package static var id: UInt { UInt(pthread_self()) }

    /// Blocks the calling thread for at least `nanoseconds` (none when it is not positive); a signal handled
    /// meanwhile does not cut the sleep short.
    package static func sleep(nanoseconds: Int64) {
        guard nanoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        _ = retryingInterrupts {
            let result = nanosleep(&request, &remaining)
            request = remaining  // an interrupted sleep goes on for what was left of it
            return result
        }
    }
}

/// The few file-system calls the package makes outside SQLite and the transport: replacing a file atomically,
/// making a rename durable, removing a file. Each returns or throws a `FileSystemError` naming the call and the path.
package enum FileSystem {
    /// Writes `contents` to `.<name>.tmp` beside `path` (mode 0644 less the umask) and renames it over `path`, so
    /// a reader sees the old file or the new one, never a part of either.
    ///
    /// - Parameter isDurable: Also `fsync` the new file before the rename and the directory after it.
    package static func replaceFile(
        atPath path: String, with contents: [UInt8], isDurable: Bool = false
    )
        throws(FileSystemError)
    {
        let (directory, name) = split(path)
        let temporary = directory + "/." + name + ".tmp"
        let descriptor = retryingInterrupts { open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
        guard descriptor >= 0 else { throw FileSystemError(operation: "open", path: temporary, errno: errno) }
        var written = 0
        while written < contents.count {
            let count = contents.withUnsafeBytes { raw in
                retryingInterrupts { write(descriptor, raw.baseAddress! + written, raw.count - written) }
            }
            guard count > 0 else {
                let error = FileSystemError(operation: "write", path: temporary, errno: errno)
                close(descriptor)
                unlink(temporary)
                throw error
            }
            written += count
        }
        if isDurable && retryingInterrupts({ fsync(descriptor) }) != 0 {
            let error = FileSystemError(operation: "fsync", path: temporary, errno: errno)
            close(descriptor)
            unlink(temporary)
            throw error
        }
        close(descriptor)
        do {
            try rename(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
        if isDurable { syncDirectory(directory) }
    }

    /// Renames `source` to `destination`, replacing a file there (`rename(2)`).
    package static func rename(_ source: String, to destination: String) throws(FileSystemError) {
        guard Glibc.rename(source, destination) == 0 else {
            throw FileSystemError(operation: "rename to \(destination)", path: source, errno: errno)
        }
    }

    /// Removes the file at `path`; a file that is not there is not an error.
    package static func removeFile(atPath path: String) {
        _ = unlink(path)
    }

    /// Whether the process may create files in `directory` (`access(2)` with `W_OK`).
    package static func isWritableDirectory(_ directory: String) -> Bool {
        access(directory, W_OK) == 0
    }

    /// Makes a creation, rename or removal in `directory` durable (`fsync` of the directory; best effort: a
    /// directory that cannot be opened is left as it is).
    package static func syncDirectory(_ directory: String) {
        let descriptor = retryingInterrupts { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard descriptor >= 0 else { return }
        _ = retryingInterrupts { fsync(descriptor) }
        close(descriptor)
    }

    /// `path`'s directory (`.` for a bare name) and last component.
    private static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
