@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusTransport

/// A listening socket made the way systemd makes one for `ListenStream=`; returns its raw descriptor.
func makeInheritedListener(at address: UnixSocketAddress) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var storage = sockaddr_un()
    storage.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &storage.sun_path) { raw in raw.copyBytes(from: Array(address.path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    precondition(bound == 0 && listen(fd, 16) == 0, "inherited listener setup failed: errno \(errno)")
    return fd
}

func activation(descriptor: Int32, pid: Int32 = getpid()) -> SocketActivation {
    SocketActivation(
        environment: ["LISTEN_PID": "\(pid)", "LISTEN_FDS": "1"], processID: getpid(), firstDescriptor: descriptor)
}

struct SocketActivationTests {
    @Test func servesTheInheritedSocketInsteadOfBinding() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let systemdPath = try directory.address("systemd.sock")
        let configuredPath = try directory.address("configured.sock")
        let inherited = makeInheritedListener(at: systemdPath)
        try withGroup { group in
            let options = UnixListener.Options(socketActivation: activation(descriptor: inherited))
            let listener = try startEchoServer(at: configuredPath, group: group, options: options)
            expectTrue(listener.isSocketActivated)
            expectNil(fileType(configuredPath.path), "nothing is bound at the configured path")
            let client = try SocketConnection.connect(to: systemdPath, on: group.loops[0])
            let probe = ConnectionProbe()
            client.start(probe.handlers)
            client.write([4, 2])
            expectTrue(probe.wait { $0.bytes == [4, 2] })
            client.close()
            listener.close()
            expectEqual(fileType(systemdPath.path), UInt32(S_IFSOCK), "systemd's socket file is not removed")
        }
    }

    @Test func bindsNormallyWhenListenPidNamesAnotherProcess() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let inherited = makeInheritedListener(at: try directory.address("systemd.sock"))
        defer { close(inherited) }
        let address = try directory.address()
        try withGroup { group in
            let options = UnixListener.Options(socketActivation: activation(descriptor: inherited, pid: getpid() + 1))
            let listener = try startEchoServer(at: address, group: group, options: options)
            defer { listener.close() }
            expectFalse(listener.isSocketActivated)
            expectEqual(fileType(address.path), UInt32(S_IFSOCK))
        }
    }

    @Test func refusesAnInheritedDescriptorThatIsNotAListeningSocket() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (notListening, _) = try FileDescriptor.makeSocketPair()
        try withGroup { group in
            let options = UnixListener.Options(socketActivation: activation(descriptor: notListening.rawValue))
            #expect(throws: ListenerError.activationDescriptorInvalid(descriptor: notListening.rawValue)) {
                try startEchoServer(at: try directory.address(), group: group, options: options)
            }
        }
    }
}
