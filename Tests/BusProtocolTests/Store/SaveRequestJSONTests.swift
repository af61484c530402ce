import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire

/// `store.save`'s params read with the model: `SaveRequest(json:model:)`.
struct SaveRequestJSONTests {
    private func decode(_ text: String) throws(RPCError) -> SaveRequest {
        try SaveRequest(json: json(text), model: .deviceReadings)
    }

    private func field(of text: String) -> String? {
        do {
            _ = try decode(text)
            return nil
        } catch {
            expectEqual(error.code, .invalidParams)
            return error.field
        }
    }

    @Test func valuesAreReadWithTheModelsTypes() throws {
        let decoded = try decode(
            """
            {"insert":[{"entity":"Reading","ref":"r1","values":{"characteristic":"2a19","value":"AQI=",
              "time":"2024-05-01T12:00:00.250Z","chain":null}}],
             "mergePolicy":"storeTrump","durability":"memory","author":"me"}
            """)
        let insert = try #require(decoded.inserts.first)
        expectEqual(insert.id, ObjectID(entity: "Reading", temporaryReference: "r1"))
        expectEqual(insert.values["characteristic"], .string("2a19"))
        expectEqual(insert.values["value"], .binary(Data([1, 2])))
        expectEqual(insert.values["time"], .date(Date(rfc3339: "2024-05-01T12:00:00.250Z")!))
        expectEqual(insert.values["chain"], .null)
        expectEqual(decoded.mergePolicy, .storeTrump)
        expectEqual(decoded.durability, .memory)
        expectEqual(decoded.author, "me")
        expectEqual(insert.id.temporaryReference, "r1")
    }

    @Test func relationshipsMayPointAtInsertsOfTheSameSaveInEveryWrittenForm() throws {
        let decoded = try decode(
            """
            {"insert":[{"entity":"Device","ref":"d","values":{"address":"AA"}},
              {"entity":"Reading","ref":"a","values":{"device":"d"}},
              {"entity":"Reading","ref":"b","values":{"device":{"ref":"d"}}},
              {"entity":"Reading","ref":"c","values":{"device":{"entity":"Device","ref":"d"}}},
              {"entity":"Reading","values":{"device":"Device/7"}}]}
            """)
        let device = ObjectID(entity: "Device", temporaryReference: "d")
        for i in 1...3 { expectEqual(decoded.inserts[i].values["device"], .reference(device)) }
        expectEqual(decoded.inserts[4].values["device"], .reference(ObjectID(entity: "Device", number: 7)))
    }

    @Test func insertsWithoutARefAreNamedByTheirIndexAvoidingGivenRefs() throws {
        let decoded = try decode(
            """
            {"insert":[{"entity":"Device","values":{"address":"A"}},
              {"entity":"Device","ref":"insert[2]","values":{"address":"B"}},
              {"entity":"Device","values":{"address":"C"}}]}
            """)
        expectEqual(decoded.inserts.map(\.id.temporaryReference), ["insert[0]", "insert[2]", "_insert[2]"])
    }

    @Test(arguments: [
        (#"{"insert":[{"entity":"Nope","values":{}}]}"#, "insert[0].entity"),
        (#"{"insert":[{"entity":"Device","values":{"colour":"red"}}]}"#, "insert[0].values.colour"),
        (#"{"insert":[{"entity":"Device","values":{"address":5}}]}"#, "insert[0].values.address"),
        (#"{"insert":[{"entity":"Reading","values":{"time":"yesterday"}}]}"#, "insert[0].values.time"),
        (#"{"insert":[{"entity":"Reading","values":{"value":"not base64!"}}]}"#, "insert[0].values.value"),
        (#"{"insert":[{"entity":"Reading","values":{"device":"nobody"}}]}"#, "insert[0].values.device"),
        (#"{"insert":[{"entity":"Reading","values":{"device":"Reading/1"}}]}"#, "insert[0].values.device"),
        (#"{"insert":[{"entity":"Device","values":{"readings":"Reading/1"}}]}"#, "insert[0].values.readings"),
        (#"{"insert":[{"entity":"Device","values":{"readings":["Reading/1",3]}}]}"#, "insert[0].values.readings[1]"),
        (#"{"insert":[{"entity":"Device","ref":"x"},{"entity":"Device","ref":"x"}]}"#, "insert[1].ref"),
        (#"{"update":[{"id":"Gadget/1","values":{}}]}"#, "update[0].id"),
        (#"{"update":[{"id":"Device/1","values":{"connected":"yes"}}]}"#, "update[0].values.connected"),
        (#"{"update":[{"id":"Device/1","values":{},"original":{"zzz":1}}]}"#, "update[0].original.zzz"),
        (#"{"delete":[{"id":"Gadget/1"}]}"#, "delete[0].id"),
        (#"{"mergePolicy":"whatever"}"#, "mergePolicy"),
        (#"{"insert":[{"entity":"Reading","values":{"device":{"ref":"ghost"}}}]}"#, "insert[0].values.device"),
    ])
    func eachMalformedFieldIsNamed(text: String, expectedField: String) {
        expectEqual(field(of: text), expectedField)
    }
}
