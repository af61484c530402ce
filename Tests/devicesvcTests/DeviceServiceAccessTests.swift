import Foundation
@preconcurrency import Glibc
import TestSupport
import Testing

@testable import ContextBusSupport
@testable import devicesvc

/// Who may talk to a real `devicesvc`: its socket file is `0660`, a client really running as uid 65534 (through
/// `setpriv`) that gets past the file mode is still refused at `bus.hello` with 403, and the service has no TCP or
/// UDP socket.
@Suite(
    .serialized,
    .enabled(if: BlueZSimulator.isSupported, "needs dbus-daemon and python3-dbus"),
    .enabled(
        if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
        "needs root, /usr/bin/setpriv and /usr/bin/python3 to start a client under another uid"))
struct DeviceServiceAccessTests {
    static let client = """
        import errno, json, socket, struct, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(60)
        try:
            s.connect(sys.argv[1])
        except OSError as e:
            print("connect failed: " + errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "bus.hello",
                           "params": {"protocol": 1, "client": "foreign"}}).encode()
        s.sendall(struct.pack(">I", len(body)) + body)
        def exactly(n):
            data = b""
            while len(data) < n:
                chunk = s.recv(n - len(data))
                if not chunk: print("closed"); sys.exit(0)
                data += chunk
            return data
        print(exactly(struct.unpack(">I", exactly(4))[0]).decode())
        """

    /// Runs the Python client as uid/gid 65534 on a thread of its own; its first output line.
    static func helloAsNobody(_ socketPath: String) async throws -> String {
        try await withLockedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                        process.arguments = [
                            "--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c",
                            client, socketPath,
                        ]
                        let output = Pipe()
                        process.standardOutput = output
                        process.standardError = output
                        try process.run()
                        let data = output.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
                    })
            }
        }
    }

    /// The whole text of a `/proc` file, read with `read(2)` until end of file (its reported size is 0, and
    /// `String(contentsOfFile:)` may stop early on a long one).
    static func readProcFile(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { bytes in
                retryingInterrupts { read(fd, bytes.baseAddress, bytes.count) }
            }
            guard n > 0 else { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `/proc/net/<table>` lines whose inode is one of `pid`'s sockets.
    static func socketEntries(of pid: pid_t, in table: String) -> [String] {
        let directory = "/proc/\(pid)/fd"
        let inodes = Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).compactMap { fd -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(fd)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
        let text = readProcFile("/proc/net/\(table)")
        let column = table == "unix" ? 6 : 9
        return text.split(separator: "\n").dropFirst().map(String.init).filter { line in
            let columns = line.split(separator: " ")
            return columns.count > column && inodes.contains(String(columns[column]))
        }
    }

    @Test func anotherUIDIsRefusedWith403AtHelloAndNothingListensOnTCP() async throws {
        let simulator = try await BlueZSimulator.start()
        defer { simulator.stopNow() }
        let service = try await DeviceServiceProcess.start(
            bus: simulator.busAddress, in: simulator.directory, lifetimeSeconds: nil)
        defer { service.stop() }
        // The test's directory lets every user through, so that only the socket file's mode decides.
        expectEqual(chmod(simulator.directory, 0o711), 0)
        var status = stat()
        expectEqual(lstat(service.socketPath, &status), 0)
        expectEqual(UInt32(status.st_mode) & 0o7777, 0o660)
        try await expectEqual(Self.helloAsNobody(service.socketPath), "connect failed: EACCES", "0660 keeps nobody out")
        // Past the file mode, the service's own check at hello still refuses the uid.
        expectEqual(chmod(service.socketPath, 0o666), 0)
        let line = try await Self.helloAsNobody(service.socketPath)
        let answer = try JSONParser().parse(Array(line.utf8))
        expectEqual(answer["error"]?["code"], .int(403), "\(line)")
        let pid = service.process.pid
        let unix = Self.socketEntries(of: pid, in: "unix")
        expectTrue(unix.contains { $0.hasSuffix(service.socketPath) }, "\(service.socketPath) not in \(unix)")
        // Connected sockets do not count: its D-Bus connection may be TCP (the simulator's bus is
        // `tcp:host=127.0.0.1`), and it inherits whatever the test process holds open. Listening TCP sockets
        // (state 0A) and unconnected UDP ones (state 07) would.
        let listening = ["tcp", "tcp6", "udp", "udp6"].flatMap { table in
            Self.socketEntries(of: pid, in: table).filter {
                $0.split(separator: " ").dropFirst(3).first == (table.hasPrefix("tcp") ? "0A" : "07")
            }
        }
        expectEqual(listening, [], "listening on IP: \(listening)")
    }
}
