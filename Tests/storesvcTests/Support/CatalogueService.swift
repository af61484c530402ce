import Foundation
@preconcurrency import Glibc

@testable import ContextBusSupport
@testable import ContextBusTransport

/// A real `storesvc` holding one `Device` with two `Reading`s, for hostile-input tests: every exchange opens a
/// fresh connection on a thread of its own (the raw client blocks), and `snapshot()` reads back everything stored.
final class CatalogueService: Sendable {
    let process: StoreServiceProcess
    /// Every object right after the setup save, as `snapshot()` reads them.
    let saved: JSONValue

    private init(process: StoreServiceProcess, saved: JSONValue) {
        self.process = process
        self.saved = saved
    }

    static let setupSave =
        #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:BB:CC:DD:EE:01","name":"thermo"}},"#
        + #"{"entity":"Reading","values":{"characteristic":"2a19","value":"Vw==","time":"2026-01-01T00:00:00.000Z","#
        + #""device":"d"}},{"entity":"Reading","values":{"characteristic":"2a37","value":"AAE=","#
        + #""time":"2026-01-01T00:00:01.000Z","device":"d"}}]}"#

    /// Starts a service (with `arguments`), saves the setup objects and takes their snapshot.
    static func start(arguments: [String] = []) async throws -> CatalogueService {
        let process = try await onOwnThread { try StoreServiceProcess.start(arguments: arguments) }
        do {
            let saved = try await onOwnThread { () throws -> JSONValue in
                let connection = try RawBusConnection(path: process.socketPath, receiveTimeoutSeconds: 180)
                try connection.hello()
                let answer = try connection.call(1, "store.save", setupSave)
                guard answer["result"]?["txn"] == .int(1) else { throw RawBusConnectionError.refused(answer) }
                return try snapshot(process.socketPath)
            }
            return CatalogueService(process: process, saved: saved)
        } catch {
            process.destroy()
            throw error
        }
    }

    func stop() { process.destroy() }

    /// Every `Device` and `Reading` with its values, read on a new connection.
    func snapshot() async throws -> JSONValue {
        let path = process.socketPath
        return try await onOwnThread { try Self.snapshot(path) }
    }

    private static func snapshot(_ path: String) throws -> JSONValue {
        let connection = try RawBusConnection(path: path, receiveTimeoutSeconds: 180)
        try connection.hello()
        let devices = try connection.call(1, "store.fetch", #"{"entity":"Device"}"#)
        let readings = try connection.call(2, "store.fetch", #"{"entity":"Reading"}"#)
        return .array([devices["result"]?["objects"] ?? .null, readings["result"]?["objects"] ?? .null])
    }

    /// Sends `method` with the params text on a new connection and returns the answer.
    func call(_ method: String, _ params: String) async throws -> JSONValue {
        let path = process.socketPath
        return try await onOwnThread {
            let connection = try RawBusConnection(path: path, receiveTimeoutSeconds: 180)
            try connection.hello()
            return try connection.call(7, method, params)
        }
    }

    /// Writes `bytes` on a new connection after `bus.hello`, then reads `count` messages (`nil`: until the
    /// service closes the connection); `stillOpen` tells whether the connection still answers `bus.ping`.
    func exchange(_ bytes: [UInt8], reading count: Int?) async throws -> (messages: [JSONValue], stillOpen: Bool) {
        let path = process.socketPath
        return try await onOwnThread {
            let connection = try RawBusConnection(path: path, receiveTimeoutSeconds: 180)
            try connection.hello()
            try connection.write(bytes)
            guard let count else { return (try connection.readUntilClosed(), false) }
            var messages: [JSONValue] = []
            for _ in 0..<count { if let message = try connection.readMessage() { messages.append(message) } }
            let pong = try? connection.call(99, "bus.ping")
            return (messages, pong?["result"] == .object([:]))
        }
    }
}

/// A request framed by hand: `params` is spliced in as raw bytes (which may be hostile).
func framedRequest(id: String = "7", method: String, params: [UInt8]) -> [UInt8] {
    Frame.encode(
        payload: Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":"#.utf8) + params
            + Array("}".utf8))
}
