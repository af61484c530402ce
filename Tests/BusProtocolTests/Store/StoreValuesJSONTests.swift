import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ContextBusWire

/// The store's values in their one wire form, used by both `storesvc` and `RemoteStore`: what one end writes, the
/// other reads back with the model to the same value.
struct StoreValuesJSONTests {
    let model = Model.deviceReadings

    @Test func aSaveRequestSurvivesTheWireAndTheServicesReading() throws {
        let device = ObjectID(entity: "Device", temporaryReference: "t-1")
        let existing = ObjectID(entity: "Device", number: 7)
        let request = SaveRequest(
            inserts: [
                .init(id: device, values: ["address": .string("AA:01"), "connected": .bool(true)]),
                .init(
                    id: ObjectID(entity: "Reading", temporaryReference: "t-2"),
                    values: [
                        "characteristic": .string("2a19"), "value": .binary(Data([1, 2])),
                        "time": .date(Date(timeIntervalSince1970: 1_700_000_000.25)), "device": .reference(device),
                    ]),
            ],
            updates: [
                .init(
                    id: existing, version: 3, values: ["name": .string("new")], original: ["name": .string("old")])
            ],
            deletes: [.init(id: ObjectID(entity: "Reading", number: 4), version: nil)],
            mergePolicy: .storeTrump, durability: .memory, author: "tester")
        // Through JSON text, as on the wire.
        let text = try JSONWriter().string(request.json)
        let decoded = try SaveRequest(json: try JSONParser().parse(text), model: model)
        expectEqual(decoded, request)
        expectEqual(decoded.inserts[0].id.temporaryReference, "t-1")
    }

    @Test func aSaveResultSurvivesTheWireWithItsChangeSet() throws {
        let device = ObjectID(entity: "Device", number: 3)
        let reading = ObjectID(entity: "Reading", number: 8)
        let changes = ChangeSet(
            txn: 12, time: Date(timeIntervalSince1970: 1_700_000_000.25), author: "tester",
            inserted: [
                ObjectSnapshot(
                    id: reading, version: 1,
                    values: [
                        "characteristic": .string("2a19"), "value": .binary(Data([7])),
                        "time": .date(Date(timeIntervalSince1970: 1_700_000_000)), "chain": .null,
                        "device": .reference(device),
                    ])
            ],
            updated: [
                .init(
                    snapshot: ObjectSnapshot(id: device, version: 4, values: ["name": .string("new")]),
                    changedKeys: ["name", "readings"], previousValues: ["name": .string("old")])
            ],
            deleted: [ObjectSnapshot(id: ObjectID(entity: "Reading", number: 2), version: 1, values: [:])])
        let result = SaveResult(
            txn: 12, ids: [ObjectID(entity: "Reading", temporaryReference: "r1"): reading],
            versions: [reading: 1, device: 4], changes: changes)
        let text = try JSONWriter().string(result.json)
        expectEqual(try SaveResult(json: try JSONParser().parse(text), model: model), result)
        // Without the change set (not asked for), the rest reads back without a model.
        var bare = result
        bare.changes = nil
        expectEqual(try SaveResult(json: result.json(includingChanges: false), model: nil), bare)
    }

    @Test func snapshotsAreReadBackWithTheModelsTypes() throws {
        let snapshot = ObjectSnapshot(
            id: ObjectID(entity: "Device", number: 2), version: 5,
            values: [
                "address": .string("AA:02"), "name": .null, "connected": .bool(false),
                "lastSeen": .date(Date(timeIntervalSince1970: 1_700_000_000.5)),
                "readings": .references([
                    ObjectID(entity: "Reading", number: 9), ObjectID(entity: "Reading", number: 3),
                ]),
            ])
        let back = try ObjectSnapshot(json: snapshot.json, model: model)
        var sorted = snapshot
        sorted.values["readings"] = .references([
            ObjectID(entity: "Reading", number: 3), ObjectID(entity: "Reading", number: 9),
        ])
        expectEqual(back, sorted)
    }

    @Test func aValueOfTheWrongTypeNamesItsField() {
        let answer: JSONValue = .object([
            "txn": .int(1),
            "objects": .array([
                .object([
                    "id": .string("Device/2"), "version": .int(1), "values": .object(["connected": .string("yes")]),
                ])
            ]),
            "missing": .array([]),
        ])
        #expect(
            throws: RPCError.invalidParams(
                field: "objects[0].values.connected", message: "expected true or false or null")
        ) {
            try StoreObjectsResult(json: answer, model: model)
        }
    }

    @Test func aFetchRequestSurvivesTheWire() throws {
        let request = FetchRequest(
            entity: "Reading",
            predicate: try ObjectPredicate(format: "value != nil AND device.name BEGINSWITH[c] $prefix"),
            arguments: ["prefix": .string("th")], sortDescriptors: [ObjectSortDescriptor("time", ascending: false)],
            fetchLimit: 10, fetchOffset: 5, resultType: .ids)
        let back = try FetchParams(json: FetchParams(request).json).fetchRequest()
        expectEqual(back.predicate, request.predicate)
        expectEqual(back.arguments, ["prefix": .json(.string("th"))])
        expectEqual(back.sortDescriptors, request.sortDescriptors)
        expectTrue(back.fetchLimit == 10 && back.fetchOffset == 5 && back.resultType == .ids)
    }

    @Test func storeErrorsSurviveTheWireWithTheirDetails() {
        let service = "storesvc at /tmp/s.sock"
        let id = ObjectID(entity: "Device", number: 4)
        let errors: [StoreError] = [
            .conflict([
                .init(id: id, version: 1, currentVersion: 2, currentValues: ["address": .string("A"), "name": .null]),
                .init(id: ObjectID(entity: "Reading", number: 1), version: 3, currentVersion: nil, currentValues: [:]),
            ]),
            .notFound(id),
            .invalidRequest(field: "insert[0].values.address", message: "expected a string or null"),
            .historyUnavailable(since: 3, oldest: 10),
            .validation([.init(id: id, key: "address", reason: "is required")]),
        ]
        for error in errors {
            let wire = RPCError(error)
            let back = StoreError(RPCError(json: wire.json)!, model: model, service: service)
            expectEqual(back, error, "\(error) came back as \(back)")
        }
    }

    @Test func codesThatAreNotStoreErrorsBecomeUnavailableNamingTheService() {
        let back = StoreError(.internalError("internal error"), model: model, service: "storesvc at /tmp/s.sock")
        expectEqual(
            back.description, "store unavailable: storesvc at /tmp/s.sock answered error -32603: internal error")
    }
}
