/// systemd socket activation (`sd_listen_fds(3)`): a listening socket inherited as descriptor 3 when
/// `LISTEN_PID` is this process and `LISTEN_FDS` is at least 1.
package struct SocketActivation: Sendable {
    /// The variables to read (`LISTEN_PID`, `LISTEN_FDS`).
    package var environment: [String: String]
    /// This process's id, compared with `LISTEN_PID`.
    package var processID: Int32
    /// The first passed descriptor (`SD_LISTEN_FDS_START`, 3).
    package var firstDescriptor: Int32
    /// Whether taking the descriptor removes the variables from the process environment, as
    /// `sd_listen_fds(1)` does, so that child processes do not try to use it.
    package var clearsProcessEnvironment: Bool

    package init(
        environment: [String: String], processID: Int32, firstDescriptor: Int32 = 3,
        clearsProcessEnvironment: Bool = false
    ) {
        self.environment = environment
        self.processID = processID
        self.firstDescriptor = firstDescriptor
        self.clearsProcessEnvironment = clearsProcessEnvironment
    }

    /// What systemd set for this process, read when the listener starts.
    package static var processEnvironment: SocketActivation {
        var environment: [String: String] = [:]
        for name in ["LISTEN_PID", "LISTEN_FDS"] { environment[name] = Syscall.environmentValue(name) }
        return SocketActivation(environment: environment, processID: Syscall.processID, clearsProcessEnvironment: true)
    }

    /// The inherited listening socket, made non-blocking and close-on-exec, or `nil` when this process was not
    /// socket-activated.
    ///
    /// - Throws: `ListenerError.activationDescriptorInvalid` when the descriptor is not a listening Unix stream
    ///   socket, so that a misconfigured unit fails loudly instead of binding somewhere else.
    func takeListener() throws(ListenerError) -> FileDescriptor? {
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == processID,
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count >= 1
        else { return nil }
        if clearsProcessEnvironment {
            for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { Syscall.removeEnvironmentValue(name) }
        }
        guard Syscall.isListeningUnixStreamSocket(firstDescriptor) else {
            throw .activationDescriptorInvalid(descriptor: firstDescriptor)
        }
        do {
            try Syscall.makeNonBlockingAndCloseOnExec(firstDescriptor)
        } catch {
            throw .system(error)
        }
        return FileDescriptor(adopting: firstDescriptor)
    }
}
