import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

struct StoreSaveMethodTests {
    private let example = json(
        #"""
        {"insert":[{"entity":"Reading","ref":"r1","values":{"characteristic":"2a19","value":"ZA==","device":"Device/1"}}],
         "update":[{"id":"Reading/3","version":2,"values":{"chain":"c-2"},"original":{"chain":null}}],
         "delete":[{"id":"Reading/4","version":1}],
         "mergePolicy":"error","durability":"disk","author":"optional name"}
        """#)

    private let model = Model.deviceReadings

    @Test func saveParamsMatchTheProtocolExampleFieldForField() throws {
        let params = try SaveRequest(json: example, model: model)
        expectEqual(
            params.inserts,
            [
                .init(
                    id: ObjectID(entity: "Reading", temporaryReference: "r1"),
                    values: [
                        "characteristic": .string("2a19"), "value": .binary(Data([0x64])),
                        "device": .reference(ObjectID(entity: "Device", number: 1)),
                    ])
            ])
        expectEqual(
            params.updates,
            [
                .init(
                    id: ObjectID(entity: "Reading", number: 3), version: 2, values: ["chain": .string("c-2")],
                    original: ["chain": .null])
            ])
        expectEqual(params.deletes, [.init(id: ObjectID(entity: "Reading", number: 4), version: 1)])
        expectEqual(params.mergePolicy, .error)
        expectEqual(params.durability, .disk)
        expectEqual(params.author, "optional name")
        expectFalse(params.includesChangesInAnswer)
        expectEqual(params.json, example)
    }

    @Test func everySaveMemberIsOptional() throws {
        expectEqual(try SaveRequest(json: json("{}"), model: model), SaveRequest())
        let unchecked = try SaveRequest(
            json: json(
                #"{"update":[{"id":"Device/1","values":{}}],"delete":[{"id":"Device/2"}],"mergePolicy":"storeTrump","durability":"memory","changes":true}"#
            ), model: model)
        expectNil(unchecked.updates.first?.version)
        expectNil(unchecked.deletes.first?.version)
        expectEqual(unchecked.mergePolicy, .storeTrump)
        expectEqual(unchecked.durability, .memory)
        expectTrue(unchecked.includesChangesInAnswer)
        try expectEqual(SaveRequest(json: unchecked.json, model: model), unchecked)
    }

    @Test(arguments: [
        (#"{"insert":[{"values":{}}]}"#, "insert[0].entity"), (#"{"insert":{}}"#, "insert"),
        (#"{"insert":[{"entity":"Device","values":[]}]}"#, "insert[0].values"),
        (#"{"update":[{"id":"Device/1","values":{}},{"id":"Device","values":{}}]}"#, "update[1].id"),
        (#"{"update":[{"id":"Device/1"}]}"#, "update[0].values"),
        (#"{"update":[{"id":"Device/1","version":"2","values":{}}]}"#, "update[0].version"),
        (#"{"delete":[{"id":"Device/1","version":1.5}]}"#, "delete[0].version"),
        (#"{"mergePolicy":"lastWins"}"#, "mergePolicy"), (#"{"durability":"tape"}"#, "durability"),
        (#"{"author":7}"#, "author"), (#"{"changes":"yes"}"#, "changes"),
    ])
    func saveNamesTheFieldThatIsWrong(text: String, field: String) {
        expectEqual(
            invalidField { () throws(RPCError) in _ = try SaveRequest(json: json(text), model: model) }, field)
    }

    @Test func saveResultMatchesTheProtocolExample() throws {
        let example = json(#"{"txn":1235,"ids":{"r1":"Reading/13"},"versions":{"Reading/13":1,"Reading/3":3}}"#)
        let result = try SaveResult(json: example, model: nil)
        expectEqual(result.txn, 1235)
        expectEqual(
            result.ids,
            [ObjectID(entity: "Reading", temporaryReference: "r1"): ObjectID(entity: "Reading", number: 13)])
        expectEqual(
            result.versions, [ObjectID(entity: "Reading", number: 13): 1, ObjectID(entity: "Reading", number: 3): 3])
        expectNil(result.changes)
        expectEqual(result.json, example)
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try SaveResult(json: json(#"{"txn":1,"versions":{"x":1}}"#), model: nil)
            },
            "versions.x")
    }

    @Test func conflictErrorListsTheConflictsInData() throws {
        let error = RPCError.conflict([
            SaveConflict(
                id: ObjectID(entity: "Reading", number: 3), version: 2, currentVersion: 4,
                currentValues: ["chain": .string("c-9")]),
            SaveConflict(
                id: ObjectID(entity: "Reading", number: 4), version: 1, currentVersion: nil, currentValues: nil),
        ])
        expectEqual(error.code, .conflict)
        expectEqual(
            error.data,
            json(
                #"{"conflicts":[{"id":"Reading/3","version":2,"currentVersion":4,"currentValues":{"chain":"c-9"}},{"id":"Reading/4","version":1,"currentVersion":null,"currentValues":null}]}"#
            ))
        let conflicts = try #require(error.data?["conflicts"]?.arrayValue)
        try expectEqual(conflicts.map(SaveConflict.init(json:)).map(\.currentVersion), [4, nil])
    }

    @Test func validationErrorListsTheIssuesInData() throws {
        let error = RPCError.validationFailed([
            ValidationIssue(ref: "r1", key: "time", reason: "is required"),
            ValidationIssue(id: ObjectID(entity: "Device", number: 2), key: "address", reason: "expected a string"),
        ])
        expectEqual(error.code, .validationFailed)
        expectEqual(
            error.data,
            json(
                #"{"errors":[{"ref":"r1","key":"time","reason":"is required"},{"id":"Device/2","key":"address","reason":"expected a string"}]}"#
            ))
        expectEqual(error.message, "validation failed for 2 values: time is required")
    }
}
