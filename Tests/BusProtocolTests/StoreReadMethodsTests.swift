import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

struct StoreReadMethodsTests {
    private let fetchExample = json(
        #"{"entity":"Reading","where":"value > $min AND device.name BEGINSWITH 'th'","args":{"min":5},"sort":[{"key":"time","ascending":false}],"limit":100,"offset":0,"result":"objects"}"#
    )

    @Test func fetchParamsMatchTheProtocolExampleFieldForField() throws {
        let params = try FetchParams(json: fetchExample)
        expectEqual(params.entity, "Reading")
        expectEqual(params.predicate, "value > $min AND device.name BEGINSWITH 'th'")
        expectEqual(params.arguments, ["min": .int(5)])
        expectEqual(params.sort, [ObjectSortDescriptor("time", ascending: false)])
        expectEqual(params.limit, 100)
        expectEqual(params.offset, 0)
        expectEqual(params.resultType, .objects)
        expectEqual(params.json, fetchExample)
    }

    @Test func fetchNeedsOnlyTheEntity() throws {
        let params = try FetchParams(json: json(#"{"entity":"Device","where":null}"#))
        expectEqual(params, FetchParams(entity: "Device"))
        let nested = try FetchParams(
            json: json(#"{"entity":"Reading","sort":[{"key":"device.name"}],"result":"count"}"#))
        expectEqual(nested.sort, [ObjectSortDescriptor("device.name", ascending: true)])
        expectEqual(nested.resultType, .count)
    }

    @Test(arguments: [
        (#"{}"#, "entity"), (#"{"entity":3}"#, "entity"), (#"{"entity":"R","where":5}"#, "where"),
        (#"{"entity":"R","args":[]}"#, "args"), (#"{"entity":"R","sort":{}}"#, "sort"),
        (#"{"entity":"R","sort":[{"key":"a"},{"ascending":true}]}"#, "sort[1].key"),
        (#"{"entity":"R","sort":[{"key":"a.","ascending":true}]}"#, "sort[0].key"),
        (#"{"entity":"R","sort":[{"key":"a","ascending":"no"}]}"#, "sort[0].ascending"),
        (#"{"entity":"R","sort":[5]}"#, "sort[0]"), (#"{"entity":"R","limit":-1}"#, "limit"),
        (#"{"entity":"R","limit":1.5}"#, "limit"), (#"{"entity":"R","offset":-3}"#, "offset"),
        (#"{"entity":"R","result":"rows"}"#, "result"),
    ])
    func fetchNamesTheFieldThatIsWrong(text: String, field: String) {
        expectEqual(invalidField { () throws(RPCError) in _ = try FetchParams(json: json(text)) }, field)
    }

    @Test func fetchResultsMatchTheProtocolForEachResultType() throws {
        let model = Model.deviceReadings
        let objects = json(
            #"{"txn":1234,"objects":[{"id":"Reading/12","version":3,"values":{"characteristic":"2a19","value":"ZA==","device":"Device/1"}}]}"#
        )
        let result = try StoreFetchResult(json: objects, model: model)
        expectEqual(result.txn, 1234)
        expectEqual(
            result.content,
            .objects([
                ObjectSnapshot(
                    id: ObjectID(entity: "Reading", number: 12), version: 3,
                    values: [
                        "characteristic": .string("2a19"), "value": .binary(Data([0x64])),
                        "device": .reference(ObjectID(entity: "Device", number: 1)),
                    ])
            ]))
        expectEqual(result.json, objects)

        let ids = json(#"{"txn":5,"ids":["Reading/1","Reading/2"]}"#)
        expectEqual(
            try StoreFetchResult(json: ids, model: model).content,
            .ids([ObjectID(entity: "Reading", number: 1), ObjectID(entity: "Reading", number: 2)]))
        try expectEqual(StoreFetchResult(json: ids, model: model).json, ids)

        let count = json(#"{"txn":5,"count":2}"#)
        try expectEqual(StoreFetchResult(json: count, model: model), StoreFetchResult(txn: 5, content: .count(2)))
        expectEqual(StoreFetchResult(txn: 5, content: .count(2)).json, count)
    }

    @Test func fetchResultNamesBadObjects() {
        let model = Model.deviceReadings
        let text = #"{"txn":1,"objects":[{"id":"Reading/1","version":1,"values":{}},{"id":"nope","version":1}]}"#
        expectEqual(
            invalidField { () throws(RPCError) in _ = try StoreFetchResult(json: json(text), model: model) },
            "objects[1].id")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try StoreFetchResult(json: json(#"{"txn":1}"#), model: model) },
            "objects")
    }

    @Test func getParamsAndResultMatchTheProtocol() throws {
        let params = json(#"{"ids":["Reading/3","Device/1"]}"#)
        expectEqual(
            try GetParams(json: params).ids,
            [
                ObjectID(entity: "Reading", number: 3), ObjectID(entity: "Device", number: 1),
            ])
        try expectEqual(GetParams(json: params).json, params)

        let result = json(
            #"{"txn":77,"objects":[{"id":"Reading/3","version":1,"values":{"time":"2026-01-02T03:04:05.678Z"}}],"missing":["Device/1"]}"#
        )
        let read = try StoreObjectsResult(json: result, model: .deviceReadings)
        expectEqual(read.txn, 77)
        expectEqual(read.objects.map(\.id), [ObjectID(entity: "Reading", number: 3)])
        expectEqual(read.missing, [ObjectID(entity: "Device", number: 1)])
        expectEqual(read.json, result)
    }

    @Test func toManyFaultsIsOptInForFetchAndGetAndRoundTrips() throws {
        expectEqual(try FetchParams(json: json(#"{"entity":"Device"}"#)).toMany, .values)
        expectEqual(try FetchParams(json: json(#"{"entity":"Device","toMany":null}"#)).toMany, .values)
        expectEqual(try GetParams(json: json(#"{"ids":[]}"#)).toMany, .values)
        // The default leaves the wire exactly as `docs/protocol.md` has it: no `toMany` member.
        expectNil(FetchParams(entity: "Device").json["toMany"])
        expectEqual(GetParams(ids: []).json, json(#"{"ids":[]}"#))

        let fetch = try FetchParams(json: json(#"{"entity":"Device","limit":1,"toMany":"faults"}"#))
        expectEqual(fetch, FetchParams(entity: "Device", limit: 1, toMany: .faults))
        try expectEqual(FetchParams(json: fetch.json), fetch)
        expectEqual(fetch.json["toMany"], .string("faults"))
        let get = try GetParams(json: json(#"{"ids":["Device/1"],"toMany":"faults"}"#))
        expectEqual(get, GetParams(ids: [ObjectID(entity: "Device", number: 1)], toMany: .faults))
        expectEqual(get.json, json(#"{"ids":["Device/1"],"toMany":"faults"}"#))
        expectEqual(try GetParams(json: json(#"{"ids":[],"toMany":"values"}"#)).json, json(#"{"ids":[]}"#))

        let request = FetchRequest(entity: "Device", fetchLimit: 1)
        expectEqual(FetchParams(request, toMany: .faults).toMany, .faults)
        expectEqual(FetchParams(request).toMany, .values)
    }

    @Test(arguments: [#""changes""#, #""Faults""#, "1", "true", #"["faults"]"#, #"{}"#])
    func anUnknownToManyModeNamesTheToManyField(value: String) {
        expectEqual(
            invalidField { () throws(RPCError) in
                _ = try FetchParams(json: json(#"{"entity":"Device","toMany":\#(value)}"#))
            }, "toMany")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try GetParams(json: json(#"{"ids":[],"toMany":\#(value)}"#)) },
            "toMany")
    }

    @Test func getNamesTheBadID() {
        expectEqual(invalidField { () throws(RPCError) in _ = try GetParams(json: json(#"{}"#)) }, "ids")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try GetParams(json: json(#"{"ids":["Reading/1","Reading/x"]}"#))
            }, "ids[1]")
        expectEqual(
            invalidField { () throws(RPCError) in _ = try GetParams(json: json(#"{"ids":["Reading/0"]}"#)) }, "ids[0]")
        expectEqual(invalidField { () throws(RPCError) in _ = try GetParams(json: json(#"{"ids":[3]}"#)) }, "ids[0]")
    }

    @Test func modelResultCarriesTheModelAndItsVersion() throws {
        let result = ModelResult(model: .deviceReadings)
        let written = result.json
        expectEqual(written["version"], .string(Model.deviceReadings.versionHash))
        expectEqual(written["entities"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["Device", "Reading"])
        let read = try ModelResult(json: written)
        expectEqual(read, result)
        expectEqual(
            invalidField { () throws(RPCError) in _ = try ModelResult(json: json(#"{"version":"x"}"#)) }, "entities")
    }

    @Test func modelResultListsPreviousVersionsOnlyWhenThereAreAny() throws {
        expectNil(ModelResult(model: .deviceReadings).json["previousVersions"])
        let migrated = ModelResult(model: .deviceReadings, previousVersions: ["a1", "b2"])
        expectEqual(migrated.json["previousVersions"], .array([.string("a1"), .string("b2")]))
        expectEqual(try ModelResult(json: migrated.json), migrated)
        var bad = migrated.json
        if case .object(var members) = bad {
            members["previousVersions"] = .array([.int(1)])
            bad = .object(members)
        }
        expectEqual(invalidField { () throws(RPCError) in _ = try ModelResult(json: bad) }, "previousVersions")
    }

    @Test func aStoreRequestNamingAnotherModelIsRefusedWith412() throws {
        let precondition = ModelVersionPrecondition(model: .deviceReadings, previousVersions: ["old"])
        let served = Model.deviceReadings.versionHash
        let refusal = try #require(
            precondition.refusal(method: "store.fetch", params: json(#"{"entity":"Device","model":"old"}"#)))
        expectEqual(refusal.code, .modelChanged)
        expectEqual(refusal.data?["requested"], .string("old"))
        expectEqual(refusal.data?["model"], .string(served))
        expectEqual(refusal.data?["previousVersions"], .array([.string("old")]))
        expectTrue(refusal.message.contains("migrated from it"))
        // The served model, no model, store.model, other services' methods and a model that is not a string pass.
        expectNil(
            precondition.refusal(method: "store.fetch", params: json(#"{"entity":"Device","model":"\#(served)"}"#)))
        expectNil(precondition.refusal(method: "store.fetch", params: json(#"{"entity":"Device"}"#)))
        expectNil(precondition.refusal(method: "store.model", params: json(#"{"model":"old"}"#)))
        expectNil(precondition.refusal(method: "device.run", params: json(#"{"model":"old"}"#)))
        expectNil(precondition.refusal(method: "store.get", params: json(#"{"model":3}"#)))
        expectEqual(
            ModelVersionPrecondition.naming("h", in: json(#"{"entity":"Device"}"#)),
            json(#"{"entity":"Device","model":"h"}"#))
        expectEqual(ModelVersionPrecondition.naming("h", in: nil), json(#"{"model":"h"}"#))
        // And a client reads 412 as the store error.
        expectEqual(
            StoreError(refusal, model: .deviceReadings, service: "storesvc"),
            .modelChanged(requested: "old", served: served))
    }
}
