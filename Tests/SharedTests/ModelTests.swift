import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// Model checks that protect the SQL store: names it would map to the same table or column, or to
/// one of its own (found by the `model` fuzz target, `Fuzz/corpus/model/regression-*`).
struct ModelTests {
    private func load(_ text: String) -> Result<Model, ModelError> {
        Result { () throws(ModelError) in
            let json: JSONValue
            do {
                json = try JSONParser().parse(text)
            } catch {
                throw .malformed("test input is not JSON: \(error)")
            }
            return try Model(json: json)
        }
    }

    @Test func entitiesNamedAAndLowercaseAAreRejectedAsOneDeclaredTwice() {
        let result = load(#"{"entities":[{"name":"A"},{"name":"a"}]}"#)
        expectEqual(result, .failure(.duplicateEntity("a")))
    }

    @Test func attributesXAndUppercaseXAreRejectedAsOneDeclaredTwice() {
        let result = load(
            #"{"entities":[{"name":"A","attributes":[{"name":"x","type":"int"},{"name":"X","type":"string"}]}]}"#)
        expectEqual(result, .failure(.duplicateKey(entity: "A", key: "X")))
    }

    @Test func aRelationshipSpelledLikeAnAttributeInAnotherCaseIsRejected() {
        let result = load(
            #"""
            {"entities":[{"name":"A","attributes":[{"name":"owner","type":"int"}],
              "relationships":[{"name":"Owner","destination":"A","inverse":"Owner"}]}]}
            """#)
        expectEqual(result, .failure(.duplicateKey(entity: "A", key: "Owner")))
    }

    @Test func anEntityNamedZHistoryIsRejectedAsTheStoresName() {
        expectEqual(
            load(#"{"entities":[{"name":"Z_HISTORY"}]}"#), .failure(.invalidName(entity: "Z_HISTORY", key: nil)))
        expectEqual(
            load(#"{"entities":[{"name":"z_m2m_A_b"}]}"#), .failure(.invalidName(entity: "z_m2m_A_b", key: nil)))
    }

    /// Found by the model fuzz target: SQLite refuses to create a table named `sqlite_…`, so a
    /// model that validated could not be opened as a store.
    @Test func anEntityNamedLikeSQLitesOwnTablesIsRejected() {
        let name = "sqlite_sequenZ_HIY"
        expectEqual(load(#"{"entities":[{"name":"\#(name)"}]}"#), .failure(.invalidName(entity: name, key: nil)))
        expectEqual(
            load(#"{"entities":[{"name":"SQLITE_stat1"}]}"#), .failure(.invalidName(entity: "SQLITE_stat1", key: nil)))
        expectTrue(ModelError.invalidName(entity: name, key: nil).description.contains("sqlite_"))
        expectNotNil((try? load(#"{"entities":[{"name":"sqliteish"}]}"#).get()))
    }

    @Test func anAttributeNamedZPKIsRejectedAsReserved() {
        let result = load(#"{"entities":[{"name":"A","attributes":[{"name":"Z_PK","type":"int"}]}]}"#)
        expectEqual(result, .failure(.reservedKey(entity: "A", key: "Z_PK")))
        let lowercase = load(#"{"entities":[{"name":"A","attributes":[{"name":"z_version","type":"int"}]}]}"#)
        expectEqual(lowercase, .failure(.reservedKey(entity: "A", key: "z_version")))
    }

    @Test func namesWithUnderscoresOutsideTheStorePrefixStayValid() throws {
        let model = try load(
            #"{"entities":[{"name":"_Z","attributes":[{"name":"Z","type":"int"},{"name":"zz_1","type":"int"}]}]}"#
        ).get()
        expectEqual(model.entity(named: "_Z")?.attributes.map(\.name), ["Z", "zz_1"])
    }

    @Test func theDescriptionsSayNamesAreComparedIgnoringCase() {
        expectTrue(ModelError.duplicateEntity("a").description.contains("ignoring case"))
        expectTrue(ModelError.invalidName(entity: "Z_A", key: nil).description.contains("Z_"))
    }
}
