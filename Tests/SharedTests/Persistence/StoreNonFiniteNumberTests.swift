import CContextBusSQLite
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// NaN and infinities (docs/wire-format.md, "NaN and infinities"): JSON has no form for them, so the stores refuse
/// them as the wire does, and a database written by an earlier version, which stored infinities as `±1e999`, still
/// reads.
struct StoreNonFiniteNumberTests {
    private func updating(_ id: ObjectID, _ values: [String: PropertyValue]) -> SaveRequest {
        SaveRequest(updates: [.init(id: id, version: nil, values: values)])
    }

    @Test(arguments: StoreFactory.all)
    func infinitiesAndNonFiniteNumbersInsideJSONAreRefusedLikeNaN(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let ref = tmp("Book", "b")
        let error = storeError {
            try store.commit(
                SaveRequest(inserts: [
                    .init(
                        id: ref,
                        values: [
                            "title": .string("x"), "price": .double(-.infinity),
                            "published": .date(Date(timeIntervalSinceReferenceDate: .infinity)),
                            "meta": .json(.object(["a": .array([.int(1), .double(.nan)])])),
                        ])
                ]))
        }
        guard case .validation(let failures)? = error else { throw error ?? StoreError.unavailable("") }
        expectEqual(Set(failures.map(\.key)), ["price", "published", "meta"])
        expectTrue(try store.all("Book").isEmpty)

        let book = try store.insert("Book", ["title": .string("y"), "meta": .json(.object(["a": .double(1.5)]))])
        let update = storeError { try store.commit(updating(book, ["price": .double(.infinity)])) }
        guard case .validation(let updateFailures)? = update else { throw update ?? StoreError.unavailable("") }
        expectEqual(updateFailures.map(\.key), ["price"])
        expectEqual(try store.snapshot(book)?.values["meta"], .json(.object(["a": .double(1.5)])))
    }

    @Test func aModelRefusesADefaultJSONHasNoFormFor() {
        for value: PropertyValue in [.double(.nan), .double(.infinity), .json(.array([.double(-.infinity)]))] {
            let type: AttributeType = value.attributeType ?? .double
            #expect(throws: ModelError.invalidDefault(entity: "A", key: "v")) {
                try Model(entities: [
                    EntityDescription(name: "A", attributes: [AttributeDescription("v", type, default: value)])
                ])
            }
        }
    }

    @Test func historyRowsOfAnEarlierVersionReadTheirInfinitiesBack() throws {
        let codec = HistoryCodec(model: TestModels.library)
        let text = #"{"i":[["Book",1,1,{"title":"t","price":1e999,"meta":[{"x":[-1e999,2]}]}]],"u":[],"d":[]}"#
        let changes = try codec.decode(text, txn: 1, time: Date(timeIntervalSinceReferenceDate: 0), author: nil)
        expectEqual(changes.inserted.first?.values["price"], .double(.infinity))
        expectEqual(
            changes.inserted.first?.values["meta"], .json(.object(["x": .array([.double(-.infinity), .int(2)])])))
    }

    @Test func aDatabaseOfAnEarlierVersionReadsItsInfinitiesAndAnUpdateMustReplaceThem() throws {
        let directory = try TestStore.makeDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("store.sqlite")
        let first = try SQLiteStore(url: url, model: TestModels.library)
        let book = try first.insert("Book", ["title": .string("old")])
        first.close()
        // What an earlier version stored for infinities: a REAL infinity, and ±1e999 in a json column's text.
        var db: OpaquePointer?
        expectEqual(sqlite3_open(url.path, &db), SQLITE_OK)
        let legacy = #"UPDATE "Book" SET "price" = -1e999, "meta" = '{"big":1e999,"small":-1e999}'"#
        expectEqual(sqlite3_exec(db, legacy, nil, nil, nil), SQLITE_OK)
        sqlite3_close(db)

        let store = try SQLiteStore(url: url, model: TestModels.library)
        defer { store.close() }
        let meta = PropertyValue.json(.object(["big": .double(.infinity), "small": .double(-.infinity)]))
        let snapshot = try #require(try store.snapshot(book))
        expectEqual(snapshot.values["price"], .double(-.infinity))
        expectEqual(snapshot.values["meta"], meta)

        // An update that leaves them would have to write them again: refused, naming them.
        let refused = storeError { try store.commit(updating(book, ["title": .string("new")])) }
        guard case .validation(let failures)? = refused else { throw refused ?? StoreError.unavailable("") }
        expectEqual(Set(failures.map(\.key)), ["price", "meta"])
        expectEqual(try store.snapshot(book)?.values["title"], .string("old"))

        // Replacing them works; the change set has the previous values, the history row `null` for them.
        let result = try store.commit(updating(book, ["price": .double(2.5), "meta": .null, "title": .string("new")]))
        let update = try #require(result.changes?.updated.first)
        expectEqual(update.previousValues["price"], .double(-.infinity))
        expectEqual(update.previousValues["meta"], meta)
        let recorded = try #require(try store.history(since: 0, limit: 10).last?.updated.first)
        expectEqual(recorded.snapshot, update.snapshot)
        expectEqual(recorded.previousValues["price"], .null)
        expectEqual(recorded.previousValues["meta"], .json(.null))
        expectEqual(recorded.previousValues["title"], .string("old"))
    }
}
