/// A file-system call that failed: which call, on which path, and the C library's reason.
package struct FileSystemError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call, `open`, `write`, `rename to /var/lib/…`.
    package var operation: String
    package var path: String
    /// The `errno` of the failure.
    package var code: Int32

    package init(operation: String, path: String, errno code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    package var description: String { "\(operation) \(path): \(systemErrorMessage(code))" }
}
