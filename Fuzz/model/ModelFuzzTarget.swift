import Foundation
import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusSupport

// Fuzz target `model`: `Model(json:)` on whatever JSON the fuzzer finds.
//
// Properties:
// - loading never crashes; a rejection is a `ModelError` with a description;
// - a model that loads writes a `jsonValue` that loads back to a model with the same
//   `versionHash` and the same `jsonValue`, and the text of that JSON loads back too;
// - `SQLSchema` places every relationship of a model that loads without crashing, and a
//   `SQLiteStore` opens a new database for it (the tables, join tables and indexes it creates
//   do not collide with each other or with the store's own tables; the one refusal allowed is
//   two many-to-many pairs whose join-table names coincide, see `SQLiteSchemaSetup`).

@_cdecl("LLVMFuzzerTestOneInput")
public func modelFuzzTarget(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzBytes(data, size)
    guard let json = try? JSONParser().parse(bytes) else { return 0 }
    let model: Model
    do {
        model = try Model(json: json)
    } catch {
        fuzzCheck(!error.description.isEmpty, "a model error without a description")
        return 0
    }

    let written = model.jsonValue
    do {
        let again = try Model(json: written)
        fuzzCheck(again.versionHash == model.versionHash, "version hash changed when reloading \(written)")
        fuzzCheck(again.jsonValue == written, "jsonValue changed when reloading \(written)")
        let text = try JSONWriter(sortsKeys: true).bytes(written)
        let fromText = try Model(json: try JSONParser().parse(text))
        fuzzCheck(fromText.versionHash == model.versionHash, "version hash changed through text")
    } catch {
        fuzzCheck(false, "a loaded model's jsonValue does not load back: \(error)")
    }

    let schema = SQLSchema(model: model)
    for entity in model.entities {
        _ = schema.table(for: entity.name)
        for relationship in entity.relationships {
            _ = schema.storage(ofRelationship: relationship.name, in: entity.name)
        }
    }
    checkOpensAsStore(model)
    return 0
}

/// Where the store opened for each model lives (removed again after each input).
private let databaseDirectory: URL = {
    let shm = URL(fileURLWithPath: "/dev/shm")
    let base = FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
    return base.appendingPathComponent("ctxbus-fuzz-model-\(getpid())")
}()

private func checkOpensAsStore(_ model: Model) {
    let files = FileManager.default
    try? files.createDirectory(at: databaseDirectory, withIntermediateDirectories: true)
    defer { try? files.removeItem(at: databaseDirectory) }
    do {
        let store = try SQLiteStore(
            url: databaseDirectory.appendingPathComponent("store.sqlite"), model: model,
            configuration: .init(readConnections: 1))
        store.close()
    } catch let error as SQLiteError where error.message.contains("would share the join table") {
        // Known: two many-to-many pairs whose `Z_M2M_<Entity>_<key>` names coincide are refused.
    } catch {
        fuzzCheck(false, "a valid model cannot be opened as a SQLite store: \(error)")
    }
}
