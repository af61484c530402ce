/// Why a simulated disk could not be set up, or a power cut not applied (tests only).
package enum PowerCutError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The directory for the journals cannot be made or written.
    case directory(path: String, reason: String)
    /// The store's own VFS is registered already, over the old default: the disk must be installed first.
    case installedTooLate
    /// A disk is installed already in this process.
    case alreadyInstalled
    /// The state file holds a line that is not an entry.
    case unreadableState(line: String)
    /// A file could not be read or changed while the cut was applied.
    case file(path: String, reason: String)

    package var description: String {
        switch self {
        case .directory(let path, let reason): return "power-cut directory \(path): \(reason)"
        case .installedTooLate:
            return "the simulated disk must be installed before any store is opened in the process"
        case .alreadyInstalled: return "a simulated disk is installed already"
        case .unreadableState(let line): return "the power-cut state has an unreadable entry: \(line)"
        case .file(let path, let reason): return "power cut: \(path): \(reason)"
        }
    }
}
