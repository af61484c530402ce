import Foundation
import Shared

// Fuzz target `model`: `Model(json:)` on whatever JSON the fuzzer finds.
//
// Properties:
// - loading never crashes; a rejection is a `ModelError` with a description;
// - a model that loads writes a `jsonValue` that loads back to a model with the same
//   `versionHash` and the same `jsonValue`, and the text of that JSON loads back too;
// - `SQLSchema` places every relationship of a model that loads without crashing.

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
    return 0
}
