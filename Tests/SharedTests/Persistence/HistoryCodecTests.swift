import CContextBusSQLite
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// The history row's text: inserts as runs, rows in the older object-only form, hostile text.
struct HistoryCodecTests {
    private let codec = HistoryCodec(model: Model.deviceReadings)

    private func reading(_ number: Int64, device: Int64? = 7) -> ObjectSnapshot {
        ObjectSnapshot(
            id: ObjectID(entity: "Reading", number: number), version: 1,
            values: [
                "characteristic": .string("2a\(number)\"\\"), "value": .binary(Data([1, 2, UInt8(number)])),
                "time": .date(Date(timeIntervalSinceReferenceDate: Double(number) + 0.25)), "chain": .null,
                "number": .double(Double(number) / 2), "unit": .string("%"),
                "device": device.map { .reference(ObjectID(entity: "Device", number: $0)) } ?? .null,
            ])
    }

    private func device(_ number: Int64) -> ObjectSnapshot {
        ObjectSnapshot(
            id: ObjectID(entity: "Device", number: number), version: 1,
            values: [
                "address": .string("AA:\(number)"), "name": .null, "connected": .bool(true),
                "lastSeen": .date(Date(timeIntervalSinceReferenceDate: 1.5)),
                "readings": .references([ObjectID(entity: "Reading", number: 1)]),
            ])
    }

    private func changeSet(inserted: [ObjectSnapshot]) -> ChangeSet {
        ChangeSet(
            txn: 9, time: Date(timeIntervalSinceReferenceDate: 100), author: "a", inserted: inserted, updated: [],
            deleted: [])
    }

    private func roundTrip(_ changes: ChangeSet) throws -> (text: String, decoded: ChangeSet) {
        let text = String(decoding: codec.encode(changes), as: UTF8.self)
        return (text, try codec.decode(text, txn: changes.txn, time: changes.time, author: changes.author))
    }

    private func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func insertsOfOneEntityAreWrittenOnceAsARunAndReadBackExactly() throws {
        let changes = changeSet(inserted: (1...50).map { reading($0) })
        let (text, decoded) = try roundTrip(changes)
        expectEqual(decoded, changes)
        expectEqual(occurrences(of: "\"characteristic\"", in: text), 1)
        expectEqual(occurrences(of: "\"Reading\"", in: text), 1)
        expectTrue(
            text.hasPrefix(
                "{\"i\":[{\"e\":\"Reading\",\"k\":[\"characteristic\",\"value\",\"time\",\"chain\",\"number\","
                    + "\"unit\",\"device\"]"))
    }

    @Test func insertsOfSeveralEntitiesKeepTheirOrder() throws {
        let changes = changeSet(inserted: [reading(1), reading(2), device(3), device(4), reading(5)])
        let (text, decoded) = try roundTrip(changes)
        expectEqual(decoded, changes)
        expectEqual(occurrences(of: "{\"e\":", in: text), 3)
    }

    @Test func anInsertNotNamingEveryPropertyIsWrittenAsAnObjectBetweenRuns() throws {
        var partial = reading(2)
        partial.values["chain"] = nil
        var foreign = reading(3)
        foreign.values["unknown"] = .string("x")  // not in the model: written, skipped when read
        let changes = changeSet(inserted: [reading(1), partial, foreign, reading(4)])
        let (text, decoded) = try roundTrip(changes)
        foreign.values["unknown"] = nil
        expectEqual(decoded, changeSet(inserted: [reading(1), partial, foreign, reading(4)]))
        expectEqual(occurrences(of: "{\"e\":", in: text), 2)
        expectEqual(occurrences(of: "[\"Reading\",", in: text), 2)
    }

    /// The form every history row had before runs (one object per insert), as that encoder wrote it.
    private static let objectFormText = """
        {"i":[["Device",1,1,{"address":"AA","connected":false,"lastSeen":1.5,"name":null,"readings":[2]}],\
        ["Reading",2,1,{"characteristic":"2a19","value":"Bwg=","time":-978307187.5,"chain":null,"device":1}]],\
        "u":[],"d":[]}
        """

    private static let objectFormChanges = ChangeSet(
        txn: 1, time: Date(timeIntervalSinceReferenceDate: 3), author: "alice",
        inserted: [
            ObjectSnapshot(
                id: ObjectID(entity: "Device", number: 1), version: 1,
                values: [
                    "address": .string("AA"), "connected": .bool(false),
                    "lastSeen": .date(Date(timeIntervalSinceReferenceDate: 1.5)), "name": .null,
                    "readings": .references([ObjectID(entity: "Reading", number: 2)]),
                ]),
            ObjectSnapshot(
                id: ObjectID(entity: "Reading", number: 2), version: 1,
                values: [
                    "characteristic": .string("2a19"), "value": .binary(Data([7, 8])),
                    "time": .date(Date(timeIntervalSince1970: 12.5)), "chain": .null,
                    "device": .reference(ObjectID(entity: "Device", number: 1)),
                ]),
        ], updated: [], deleted: [])

    @Test func rowsWrittenBeforeRunsReadBackUnchanged() throws {
        let decoded = try codec.decode(
            Self.objectFormText, txn: 1, time: Date(timeIntervalSinceReferenceDate: 3), author: "alice")
        expectEqual(decoded, Self.objectFormChanges)
    }

    @Test func aStoreFileWithObjectFormHistoryReplaysIt() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        var store = try SQLiteStore(url: url, model: Model.deviceReadings)
        let device = tmp("Device", "d")
        try store.commit(
            SaveRequest(
                inserts: [
                    .init(id: device, values: ["address": .string("AA"), "lastSeen": .date(Date())]),
                    .init(
                        id: tmp("Reading", "r"),
                        values: [
                            "characteristic": .string("2a19"), "value": .binary(Data([7, 8])),
                            "time": .date(Date(timeIntervalSince1970: 12.5)), "device": .reference(device),
                        ]),
                ], author: "alice"))
        store.close()
        // Replace the row with the older form of the same change set, as an older version left it.
        var db: OpaquePointer?
        expectEqual(sqlite3_open(url.path, &db), SQLITE_OK)
        let sql = "UPDATE Z_HISTORY SET Z_CHANGES = ?, Z_TIME = 3 WHERE Z_TXN = 1"
        var statement: OpaquePointer?
        expectEqual(sqlite3_prepare_v2(db, sql, -1, &statement, nil), SQLITE_OK)
        sqlite3_bind_text(statement, 1, Self.objectFormText, -1, csqlite_transient())
        expectEqual(sqlite3_step(statement), SQLITE_DONE)
        sqlite3_finalize(statement)
        expectEqual(sqlite3_changes(db), 1)
        sqlite3_close(db)
        store = try SQLiteStore(url: url, model: Model.deviceReadings)
        defer { store.close() }
        try expectEqual(store.history(since: 0, limit: 10), [Self.objectFormChanges])
    }

    @Test func aRunWithKeysTheModelNoLongerHasSkipsThem() throws {
        let text = """
            {"i":[{"e":"Reading","k":["gone","characteristic"],"r":[[4,2,"x","2a"]]}],"u":[],"d":[]}
            """
        let decoded = try codec.decode(text, txn: 1, time: Date(timeIntervalSinceReferenceDate: 0), author: nil)
        expectEqual(
            decoded.inserted,
            [
                ObjectSnapshot(
                    id: ObjectID(entity: "Reading", number: 4), version: 2, values: ["characteristic": .string("2a")])
            ])
    }

    @Test(arguments: [
        #"{"i":[{"e":"Reading","k":["time"],"r":[[1]]}],"u":[],"d":[]}"#,  // a row without its values
        #"{"i":[{"e":"Reading","k":["time"],"r":[[1,1,2.5,3]]}],"u":[],"d":[]}"#,  // one value too many
        #"{"i":[{"e":"Nothing","k":[],"r":[]}],"u":[],"d":[]}"#,  // an unknown entity
        #"{"i":[{"e":"Reading","k":[1],"r":[]}],"u":[],"d":[]}"#,  // a key that is not a string
        #"{"i":[{"e":"Reading","k":["time"],"r":[["1",1,2.5]]}],"u":[],"d":[]}"#,  // a number that is a string
        #"{"i":[{"e":"Reading","r":[]}],"u":[],"d":[]}"#,  // no keys
        #"{"i":[7],"u":[],"d":[]}"#,  // neither an object nor a run
    ])
    func malformedInsertsAreRejected(text: String) {
        #expect(throws: HistoryCodec.DecodingError.self) {
            try codec.decode(text, txn: 5, time: Date(timeIntervalSinceReferenceDate: 0), author: nil)
        }
    }
}
