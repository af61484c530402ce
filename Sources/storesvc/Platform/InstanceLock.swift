import ContextBusSupport
@preconcurrency import Glibc

/// One `storesvc` per database: an exclusive `flock` on `<database>.lock`, held for the life of
/// the process (the kernel releases it when the process dies, even by `kill -9`).
///
/// The lock file holds the owner's pid, for people; only the lock itself counts.
final class InstanceLock: Sendable {
    /// The lock file.
    let path: String
    private let descriptor: Int32

    /// Takes the lock for `databasePath`.
    ///
    /// - Throws: `InstanceLockError.held` when another process holds it; `.cannotOpen` when the
    ///   lock file cannot be created.
    init(databasePath: String) throws(InstanceLockError) {
        path = databasePath + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
        let status = retryingInterrupts { flock(fd, LOCK_EX | LOCK_NB) }
        guard status == 0 else {
            let error = errno
            let holder = Self.readOwner(fd)
            close(fd)
            if error == EWOULDBLOCK { throw .held(path: path, owner: holder) }
            throw .cannotOpen(path: path, errno: error)
        }
        descriptor = fd
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    deinit { close(descriptor) }

    private static func readOwner(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int32(String(decoding: buffer[..<count], as: UTF8.self).trimmingSpaces())
    }
}

/// Why `storesvc` could not take its database's lock.
enum InstanceLockError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another process holds the lock: another storesvc serves this database.
    case held(path: String, owner: Int32?)
    case cannotOpen(path: String, errno: Int32)

    var description: String {
        switch self {
        case .held(let path, let owner):
            let who = owner.map { "process \($0)" } ?? "another process"
            return "the database is in use by another storesvc (\(who) holds \(path))"
        case .cannotOpen(let path, let error):
            return "cannot open the lock file \(path): \(String(cString: strerror(error)))"
        }
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(unicodeScalars.filter { !$0.properties.isWhitespace })
    }
}
