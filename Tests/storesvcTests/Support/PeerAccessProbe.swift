import Foundation
@preconcurrency import Glibc

@testable import ContextBusSupport

/// Access checks from outside a service: a `bus.hello` sent by a client running under another uid (a standard-library
/// Python client started through `setpriv`), and the service's sockets as `/proc` lists them.
enum PeerAccessProbe {
    static let setpriv = "/usr/bin/setpriv"
    static let python = "/usr/bin/python3"
    /// `nobody` on Debian.
    static let foreignUserID: UInt32 = 65534

    /// Whether the tests can switch to another uid: they run as root and `setpriv` and a system Python exist.
    static var canRunAsAnotherUser: Bool {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: setpriv)
            && FileManager.default.isExecutableFile(atPath: python)
    }

    /// Connects to `socketPath` as uid/gid 65534 with no supplementary groups, sends `bus.hello` and returns the
    /// first line the client printed: the answer's JSON, or `connect failed: <errno name>`.
    static func helloAsAnotherUser(socketPath: String) throws -> String {
        let client = """
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: setpriv)
        process.arguments = [
            "--reuid", "\(foreignUserID)", "--regid", "\(foreignUserID)", "--clear-groups", python, "-c", client,
            socketPath,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    }

    /// The inodes of the sockets process `pid` holds open (`/proc/PID/fd/* -> socket:[N]`).
    static func socketInodes(of pid: Int32) -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return Set(
            descriptors.compactMap { descriptor in
                guard
                    let target = try? FileManager.default.destinationOfSymbolicLink(
                        atPath: "\(directory)/\(descriptor)"),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst("socket:[".count).dropLast())
            })
    }

    /// The entries of `/proc/net/<table>` (`tcp`, `tcp6`, `udp`, `udp6`, `unix`) whose inode is in `inodes`.
    static func entries(of table: String, withInodes inodes: Set<String>) -> [String] {
        let text = readProcFile("/proc/net/\(table)")
        let inodeColumn = table == "unix" ? 6 : 9
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > inodeColumn, inodes.contains(String(columns[inodeColumn])) else { return nil }
            return String(line)
        }
    }

    /// The permission bits of the file at `path`.
    static func mode(of path: String) throws -> UInt32 {
        var status = stat()
        guard lstat(path, &status) == 0 else { throw RawBusConnectionError.system("lstat", errno) }
        return UInt32(status.st_mode) & 0o7777
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
}
