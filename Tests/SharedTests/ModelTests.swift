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

    /// A device model with `uniqueBy`, as `storesvc --model` reads it.
    private func devices(uniqueBy: [[String]]) -> String {
        let sets = uniqueBy.map { "[" + $0.map { #""\#($0)""# }.joined(separator: ",") + "]" }.joined(separator: ",")
        return #"""
            {"entities":[{"name":"Device","attributes":[{"name":"address","type":"string"},{"name":"name","type":"string","optional":true}],
              "relationships":[{"name":"readings","destination":"Reading","toMany":true,"inverse":"device"},
                               {"name":"owner","destination":"Owner","inverse":"devices"}],
              "uniqueBy":[\#(sets)]},
             {"name":"Reading","relationships":[{"name":"device","destination":"Device","inverse":"readings"}]},
             {"name":"Owner","relationships":[{"name":"devices","destination":"Device","toMany":true,"inverse":"owner"}]}]}
            """#
    }

    /// The same model through the Swift API.
    private func deviceEntities(uniqueBy: [[String]]) -> [EntityDescription] {
        [
            EntityDescription(
                name: "Device",
                attributes: [
                    AttributeDescription("address", .string), AttributeDescription("name", .string, optional: true),
                ],
                relationships: [
                    RelationshipDescription("readings", destination: "Reading", toMany: true, inverse: "device"),
                    RelationshipDescription("owner", destination: "Owner", inverse: "devices"),
                ],
                uniqueBy: uniqueBy),
            EntityDescription(
                name: "Reading",
                relationships: [RelationshipDescription("device", destination: "Device", inverse: "readings")]),
            EntityDescription(
                name: "Owner",
                relationships: [
                    RelationshipDescription("devices", destination: "Device", toMany: true, inverse: "owner")
                ]),
        ]
    }

    /// The issue's first bad input: a `uniqueBy` set must name attributes or to-one relationships, each once.
    @Test(arguments: [
        ([[]], ModelError.invalidUniqueKey(entity: "Device", key: nil)),
        ([["colour"]], .invalidUniqueKey(entity: "Device", key: "colour")),
        ([["address"], ["readings"]], .invalidUniqueKey(entity: "Device", key: "readings")),
        ([["name", "address", "address"]], .invalidUniqueKey(entity: "Device", key: "address")),
    ])
    func aUniqueBySetOfUnknownToManyRepeatedOrNoKeysIsRefusedNamingIt(uniqueBy: [[String]], expected: ModelError) {
        expectEqual(load(devices(uniqueBy: uniqueBy)), .failure(expected))
        #expect(throws: expected) { try Model(entities: deviceEntities(uniqueBy: uniqueBy)) }
        if case .invalidUniqueKey(_, let key?) = expected {
            expectTrue(expected.description.contains("Device.uniqueBy names '\(key)'"), "\(expected)")
        } else {
            expectTrue(expected.description.contains("empty set"), "\(expected)")
        }
    }

    @Test func aUniqueBySetReadFromJSONIsKeptWrittenBackAndChangesTheVersion() throws {
        let model = try load(devices(uniqueBy: [["address"], ["name", "owner"]])).get()
        expectEqual(model.entity(named: "Device")?.uniqueBy, [["address"], ["name", "owner"]])
        expectEqual(try Model(entities: deviceEntities(uniqueBy: [["address"], ["name", "owner"]])), model)
        let written = model.jsonValue
        let device = written["entities"]?.arrayValue?.first { $0["name"] == .string("Device") }
        expectEqual(
            device?["uniqueBy"],
            .array([.array([.string("address")]), .array([.string("name"), .string("owner")])]))
        expectEqual(try Model(json: written), model)
        let without = try load(devices(uniqueBy: [])).get()
        expectNil(without.jsonValue["entities"]?.arrayValue?.first?["uniqueBy"])
        expectTrue(without.versionHash != model.versionHash, "uniqueBy is part of the version")
    }
}
