import Foundation

/// The demo's command line: the services' sockets (by default where the services and ctxbus put them:
/// `$CTXBUS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/ctxbus`, else `./run`) and how many rounds of chains to run.
struct DemoOptions: Sendable {
    static let usage = "usage: patterns [--store SOCKET] [--device SOCKET] [--rounds N] [--seconds N]"

    struct UsageError: Error, CustomStringConvertible {
        var description: String
    }

    var storeSocket: String
    var deviceSocket: String
    /// Rounds of chains over every device (pattern 5); at least one.
    var rounds = 1
    /// Keep running rounds until this many seconds have passed since the start (0: just `rounds`).
    var seconds = 0.0

    init(arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let runtime = Self.runtimeDirectory(environment)
        storeSocket = environment["CTXBUS_STORE_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? runtime + "/store.sock"
        deviceSocket = environment["CTXBUS_DEVICE_SOCKET"].flatMap { $0.isEmpty ? nil : $0 } ?? runtime + "/device.sock"
        var words = arguments[...]
        func value(_ name: String) throws -> String {
            guard let word = words.popFirst() else { throw UsageError(description: "\(name) needs a value") }
            return word
        }
        while let word = words.popFirst() {
            switch word {
            case "--store": storeSocket = try value(word)
            case "--device": deviceSocket = try value(word)
            case "--rounds":
                guard let rounds = Int(try value(word)), rounds >= 1 else {
                    throw UsageError(description: "--rounds takes a whole number of at least 1")
                }
                self.rounds = rounds
            case "--seconds":
                guard let seconds = Double(try value(word)), seconds >= 0 else {
                    throw UsageError(description: "--seconds takes a number of seconds")
                }
                self.seconds = seconds
            default: throw UsageError(description: "unknown argument \(word)")
            }
        }
    }

    /// `$CTXBUS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/ctxbus`, else `./run` (docs/protocol.md, "Transport").
    static func runtimeDirectory(_ environment: [String: String]) -> String {
        if let directory = environment["CTXBUS_RUNTIME_DIR"], !directory.isEmpty { return directory }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { return xdg + "/ctxbus" }
        return "./run"
    }
}
