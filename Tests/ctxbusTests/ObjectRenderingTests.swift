import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire
@testable import ctxbus

struct ObjectRenderingTests {
    let rendering = ObjectRendering(model: .deviceReadings)
    let reading = StoreObject(
        id: ObjectID(entity: "Reading", number: 12), version: 1,
        values: [
            "value": .string("Wg=="), "characteristic": .string("2a19"), "time": .string("2024-05-01T12:00:00.000Z"),
            "chain": .null, "number": .double(90), "unit": .string("%"), "device": .string("Device/3"),
            "extra": .int(5),
        ])

    @Test func columnsFollowTheModelThenOtherKeysSorted() {
        expectEqual(
            rendering.columns(for: "Reading", objects: [reading]),
            [
                "characteristic", "value", "time", "chain", "number", "unit", "device", "extra",
            ])
        expectEqual(ObjectRendering(model: nil).columns(for: "Reading", objects: [reading]).first, "chain")
    }

    @Test func binaryValuesAreHexNullIsADashAndVersionsAreRightAligned() {
        let lines = rendering.table(for: [reading], entity: "Reading").lines
        expectEqual(
            lines[0],
            "id          version  characteristic  value  time                      chain  number  unit  device    extra"
        )
        expectEqual(
            lines[1],
            "Reading/12        1  2a19            5a     2024-05-01T12:00:00.000Z  -        90.0  %     Device/3  5")
    }

    @Test func objectsOfSeveralEntitiesGetATableEach() {
        let device = StoreObject(
            id: ObjectID(entity: "Device", number: 3), version: 2, values: ["address": .string("AA:BB:CC:DD:EE:01")])
        let lines = rendering.lines(for: [reading, device])
        expectEqual(lines.first, "Reading:")
        expectTrue(lines.contains(""))
        expectTrue(lines.contains("Device:"))
    }

    @Test func aChangeIsOneLinePerObject() {
        let change = ChangedEvent(
            subscription: 1, txn: 9, author: "app", inserted: [reading],
            updated: [
                StoreObject(id: ObjectID(entity: "Device", number: 3), version: 5, values: ["name": .string("my lamp")])
            ],
            deleted: [ObjectID(entity: "Reading", number: 4)])
        expectEqual(
            rendering.lines(for: change),
            [
                "txn 9 (app)  inserted  Reading/12  v1  characteristic=2a19 value=5a time=2024-05-01T12:00:00.000Z "
                    + "chain=- number=90.0 unit=% device=Device/3 extra=5",
                "txn 9 (app)  updated   Device/3  v5  name=\"my lamp\"",
                "txn 9 (app)  deleted   Reading/4",
            ])
    }

    @Test func anUpdateWithToManyChangesListsTheMembersAddedAndRemoved() {
        let device = StoreObject(
            id: ObjectID(entity: "Device", number: 3), version: 6, values: ["name": .string("lamp")],
            toManyChanges: [
                "readings": ToManyChange(
                    added: [ObjectID(entity: "Reading", number: 7), ObjectID(entity: "Reading", number: 8)],
                    removed: [ObjectID(entity: "Reading", number: 2)])
            ])
        let added = StoreObject(
            id: ObjectID(entity: "Device", number: 4), version: 2, values: [:],
            toManyChanges: ["readings": ToManyChange(added: [ObjectID(entity: "Reading", number: 9)])])
        let change = ChangedEvent(
            subscription: 1, txn: 10, author: nil, inserted: [], updated: [device, added], deleted: [])
        expectEqual(
            rendering.lines(for: change),
            [
                "txn 10  updated   Device/3  v6  name=lamp readings+=Reading/7,Reading/8 readings-=Reading/2",
                "txn 10  updated   Device/4  v2  readings+=Reading/9",
            ])
    }
}
