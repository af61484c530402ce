import Foundation
import TestSupport
import Testing

/// Each malformed input gets the answer docs/protocol.md gives it, and the service stays up with its
/// data intact.
@Suite(.serialized) final class StoreServiceHostileInputTests {
    let service: StoreServiceProcess

    init() throws {
        service = try StoreServiceProcess.start(arguments: ["--max-frame", "4096"])
        let setup = try RawBusConnection(path: service.socketPath)
        try setup.hello()
        let saved = try setup.call(
            1, "store.save", #"{"insert":[{"entity":"Device","ref":"d","values":{"address":"AA:BB"}}]}"#)
        precondition(saved["result"]?["txn"] == .int(1), "setup save failed: \(saved)")
    }

    deinit { service.destroy() }

    /// The service still answers a fresh connection and still holds the setup data.
    private func expectServiceIntact() throws {
        let probe = try RawBusConnection(path: service.socketPath)
        try probe.hello()
        let count = try probe.call(2, "store.fetch", #"{"entity":"Device","result":"count"}"#)
        expectEqual(count["result"]?["count"], .int(1))
    }

    private func helloedConnection() throws -> RawBusConnection {
        let connection = try RawBusConnection(path: service.socketPath)
        try connection.hello()
        return connection
    }

    @Test func notJSONIsAParseErrorAndTheConnectionStaysOpen() throws {
        let connection = try helloedConnection()
        try connection.writeFrame("{this is not json")
        let answer = try #require(try connection.readMessage())
        expectEqual(answer["id"], .null)
        expectEqual(answer["error"]?["code"], .int(-32700))
        try expectEqual(connection.call(5, "bus.ping")["result"], .object([:]))
        try expectServiceIntact()
    }

    @Test func invalidUTF8IsAParseError() throws {
        let connection = try helloedConnection()
        try connection.writeFrame([0x7B, 0x22, 0xFF, 0xFE, 0x22, 0x3A, 0x31, 0x7D])
        let answer = try #require(try connection.readMessage())
        expectEqual(answer["error"]?["code"], .int(-32700))
        try expectServiceIntact()
    }

    @Test func aBatchIsAnInvalidRequest() throws {
        let connection = try helloedConnection()
        try connection.writeFrame(#"[{"jsonrpc":"2.0","id":1,"method":"bus.ping"}]"#)
        let answer = try #require(try connection.readMessage())
        expectEqual(answer["error"]?["code"], .int(-32600))
        expectNotNil(try connection.call(5, "bus.ping")["result"])
        try expectServiceIntact()
    }

    @Test func anUnknownMethodIsMethodNotFound() throws {
        let answer = try helloedConnection().call(3, "store.teleport")
        expectEqual(answer["id"], .int(3))
        expectEqual(answer["error"]?["code"], .int(-32601))
        try expectServiceIntact()
    }

    @Test func badParamsNameTheField() throws {
        let connection = try helloedConnection()
        let wrongType = try connection.call(4, "store.fetch", #"{"entity":12}"#)
        expectEqual(wrongType["error"]?["code"], .int(-32602))
        expectEqual(wrongType["error"]?["data"]?["field"], .string("entity"))
        let badSave = try connection.call(
            5, "store.save", #"{"insert":[{"entity":"Device","values":{"address":"X","colour":"red"}}]}"#)
        expectEqual(badSave["error"]?["data"]?["field"], .string("insert[0].values.colour"))
        let badWhere = try connection.call(6, "store.fetch", #"{"entity":"Device","where":"address == "}"#)
        expectEqual(badWhere["error"]?["data"]?["field"], .string("where"))
        expectEqual(badWhere["error"]?["data"]?["position"], .int(11))
        try expectServiceIntact()
    }

    @Test func anOversizedFrameIsAnInvalidRequestThenTheConnectionCloses() throws {
        let connection = try helloedConnection()
        try connection.write([0, 0, 0x20, 0x00])  // 8192 > --max-frame 4096
        let messages = try connection.readUntilClosed()
        expectEqual(messages.count, 1)
        expectEqual(messages.first?["id"], .null)
        expectEqual(messages.first?["error"]?["code"], .int(-32600))
        try expectServiceIntact()
    }

    @Test func aZeroLengthFrameIsAnInvalidRequestThenTheConnectionCloses() throws {
        let connection = try helloedConnection()
        try connection.write([0, 0, 0, 0])
        let messages = try connection.readUntilClosed()
        expectEqual(messages.map { $0["error"]?["code"] }, [.int(-32600)])
        try expectServiceIntact()
    }

    @Test func anyMethodBeforeHelloIsRefusedWith401() throws {
        let connection = try RawBusConnection(path: service.socketPath)
        let answer = try connection.call(1, "store.save", #"{"delete":[{"id":"Device/1"}]}"#)
        expectEqual(answer["error"]?["code"], .int(401))
        try connection.hello()
        try expectServiceIntact()
    }

    @Test func aOneShotPeerThatStopsWritingIsAnsweredAndItsSaveIsCommitted() throws {
        let connection = try helloedConnection()
        try connection.writeFrame(
            #"{"jsonrpc":"2.0","id":7,"method":"store.save","params":{"insert":[{"entity":"Device","ref":"e","#
                + #""values":{"address":"AA:CC"}}],"durability":"disk"}}"#)
        try connection.writeFrame(#"{"jsonrpc":"2.0","id":8,"method":"store.fetch","params":{"entity":"Device"}}"#)
        shutdown(connection.fd, Int32(SHUT_WR))
        // Answered in any order (the fetch need not wait for the save's fsync), then the connection closes.
        let answers = try connection.readUntilClosed()
        expectEqual(Set(answers.compactMap { $0["id"]?.intValue }), [7, 8])
        let saved = try #require(answers.first { $0["id"] == .int(7) })
        expectEqual(saved["result"]?["txn"], .int(2))
        expectNotNil(answers.first { $0["id"] == .int(8) }?["result"]?["objects"])
        // The save is there for everyone; undo it so the other tests find the setup data alone.
        let probe = try helloedConnection()
        let count = try probe.call(2, "store.fetch", #"{"entity":"Device","result":"count"}"#)
        expectEqual(count["result"]?["count"], .int(2))
        let id = try #require(saved["result"]?["ids"]?["e"]?.stringValue)
        let deleted = try probe.call(3, "store.save", #"{"delete":[{"id":"\#(id)"}]}"#)
        expectNotNil(deleted["result"], "\(deleted)")
        try expectServiceIntact()
    }

    @Test func aPeerThatClosesMidFrameLeavesTheServiceUp() throws {
        do {
            let connection = try helloedConnection()
            try connection.write([0, 0, 0, 50] + Array(#"{"jsonrpc":"2.0","id":1,"#.utf8))
        }
        try expectServiceIntact()
    }
}
