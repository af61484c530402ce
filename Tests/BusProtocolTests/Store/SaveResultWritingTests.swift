import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire

/// `SaveResult` writes `store.save`'s answer as text (`JSONWritable`): the same JSON as its `json` tree, which reads
/// back into the same result.
struct SaveResultWritingTests {
    private func written(_ result: SaveResult) throws -> [UInt8] {
        var output: [UInt8] = []
        try result.writeJSON(into: &output, writer: JSONWriter())
        return output
    }

    private func randomResult(_ generator: inout some RandomNumberGenerator) -> SaveResult {
        var ids: [ObjectID: ObjectID] = [:]
        var versions: [ObjectID: Int64] = [:]
        for index in 0..<Int.random(in: 0...4, using: &generator) {
            let permanent = ObjectID(
                entity: index.isMultiple(of: 2) ? "Device" : "Réading \"q\"", number: Int64(index + 1))
            let name = ["r\(index)", "insert[\(index)]", "ref \"\(index)\" \\ é"].randomElement(using: &generator)!
            ids[ObjectID(entity: permanent.entity, temporaryReference: name)] = permanent
            versions[permanent] = 1
        }
        for index in 0..<Int.random(in: 0...3, using: &generator) {
            versions[ObjectID(entity: "Device", number: Int64(100 + index))] = Int64.random(
                in: 2...1000, using: &generator)
        }
        var changes: ChangeSet?
        if Bool.random(using: &generator) {
            changes = ChangeSet(
                txn: 9, time: Date(timeIntervalSince1970: 1_795_305_320.5), author: "bench",
                inserted: [
                    ObjectSnapshot(
                        id: ObjectID(entity: "Device", number: 1), version: 1, values: ["name": .string("a")])
                ],
                updated: [], deleted: [])
        }
        return SaveResult(
            txn: Int64.random(in: 0...Int64.max, using: &generator), ids: ids, versions: versions, changes: changes)
    }

    @Test func writesTheSameJSONAsItsJSONTree() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let result = randomResult(&generator)
            let bytes = try written(result)
            let parsed = try JSONParser().parse(bytes)
            expectTrue(numericallyEqual(parsed, result.json), "\(String(decoding: bytes, as: UTF8.self))")
            expectEqual(try SaveResult(json: parsed, model: Model.deviceReadings), result)
        }
    }

    @Test func aSaveOfOneInsertIsWrittenAsTheProtocolShowsIt() throws {
        let id = ObjectID(entity: "Device", number: 13)
        let result = SaveResult(
            txn: 1235, ids: [ObjectID(entity: "Device", temporaryReference: "d"): id], versions: [id: 1], changes: nil)
        expectEqual(
            String(decoding: try written(result), as: UTF8.self),
            #"{"txn":1235,"ids":{"d":"Device/13"},"versions":{"Device/13":1}}"#)
    }

    @Test func insertsNamedAlikeAreWrittenOnceAsInTheJSONTree() throws {
        // A ref spelled like a reserved ID names two inserts alike: the object keeps one of them, as `json` does.
        let reserved = ObjectID(entity: "Device", number: 5)
        let result = SaveResult(
            txn: 3,
            ids: [
                reserved: reserved,
                ObjectID(entity: "Device", temporaryReference: "Device/5"): ObjectID(entity: "Device", number: 6),
            ],
            versions: [reserved: 1, ObjectID(entity: "Device", number: 6): 1], changes: nil)
        let parsed = try JSONParser().parse(try written(result))
        expectTrue(numericallyEqual(parsed, result.json))
    }
}
