// The socket path rules of docs/protocol.md "Transport and framing": the directory is created 0700 if missing, a
// stale socket is replaced, a live one refuses the start, and anything that is not a socket is never deleted.

extension UnixListener {
    /// Makes `address.path` ready for `bind`: creates missing directories with `directoryMode`, removes a stale
    /// socket, refuses a live one or a non-socket.
    static func prepareSocketPath(_ address: UnixSocketAddress, directoryMode: UInt32) throws(ListenerError) {
        try makeDirectories(address.parentDirectory, mode: directoryMode)
        let kind: Syscall.FileKind
        do {
            kind = try Syscall.fileKind(atPath: address.path)
        } catch {
            throw .system(error)
        }
        switch kind {
        case .missing:
            return
        case .socket:
            if try isAnswering(address) { throw .addressInUse(path: address.path) }
            do {
                try Syscall.removeFile(atPath: address.path)
            } catch  where error.errno == SystemError.noSuchFile {
                return  // removed by someone else meanwhile
            } catch {
                throw .system(error)
            }
        case .directory:
            throw .pathOccupied(path: address.path, kind: "a directory")
        case .other:
            throw .pathOccupied(path: address.path, kind: "a file of another kind")
        }
    }

    /// Whether a listener answers at the socket path: connected, or refused only because its backlog is full.
    private static func isAnswering(_ address: UnixSocketAddress) throws(ListenerError) -> Bool {
        let probe: FileDescriptor
        do {
            probe = try Syscall.makeStreamSocket()
        } catch {
            throw .system(error)
        }
        defer { probe.close() }
        do {
            try Syscall.connect(probe.rawValue, to: address)
            return true
        } catch {
            switch ConnectError(error, path: address.path) {
            case .connectionRefused, .noSuchSocket: return false
            case .listenerBusy: return true
            case .permissionDenied: throw .system(error)
            case .system(let error): throw .system(error)
            }
        }
    }

    /// Creates `path` and missing ancestors with exactly `mode`; an existing directory is left as it is.
    private static func makeDirectories(_ path: String, mode: UInt32) throws(ListenerError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") where !component.isEmpty {
            prefix += prefix.isEmpty || prefix.hasSuffix("/") ? String(component) : "/" + component
            let kind: Syscall.FileKind
            do {
                kind = try Syscall.fileKind(atPath: prefix)
            } catch {
                throw .system(error)
            }
            switch kind {
            case .directory:
                continue
            case .missing:
                do {
                    try Syscall.makeDirectory(atPath: prefix, mode: mode)
                } catch  where error.errno == SystemError.fileExists {
                    // Created concurrently; fine if it is a directory.
                    if (try? Syscall.fileKind(atPath: prefix)) != .directory { throw .parentNotDirectory(path: prefix) }
                } catch {
                    throw .system(error)
                }
            case .socket, .other:
                // A symbolic link to a directory is accepted (lstat reports the link, so check where it leads).
                if !Syscall.isDirectory(followingLinksAt: prefix) { throw .parentNotDirectory(path: prefix) }
            }
        }
    }
}
