import ContextBusCodeGeneration
import ContextBusObjectGraph
import ContextBusSupport
import Foundation
import TestSupport
import Testing

/// `EntityCodeGenerator`: what it writes for the shapes of a model, and the errors for what it cannot write.
struct EntityCodeGeneratorTests {
    private func source(_ json: String, access: EntityCodeGenerator.Access = .public) throws -> String {
        try EntityCodeGenerator(access: access).source(forModelJSON: Data(json.utf8), named: "Test.ctxmodel.json")
    }

    private func error(_ json: String) -> EntityCodeError? {
        do {
            _ = try source(json)
            return nil
        } catch let error as EntityCodeError {
            return error
        } catch {
            return nil
        }
    }

    private func expectContains(_ text: String, _ part: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectTrue(text.contains(part), Comment(rawValue: "\(part) not in:\n\(text)"), sourceLocation: sourceLocation)
    }

    private func expectLacks(_ text: String, _ part: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectFalse(text.contains(part), Comment(rawValue: "\(part) in:\n\(text)"), sourceLocation: sourceLocation)
    }

    @Test func aModelFileWithAnUnknownAttributeTypeIsAnErrorNamingTheEntityAndKey() throws {
        let failure = error(#"{"entities":[{"name":"Plant","attributes":[{"name":"height","type":"float"}]}]}"#)
        let text = try #require(failure).description
        expectContains(text, "Test.ctxmodel.json")
        expectContains(text, "Plant.height")
        expectContains(text, "'type' must be one of string, int")
    }

    @Test func aRelationshipWithoutItsInverseIsAnErrorNamingTheEntityAndKey() throws {
        let json = """
            {"entities":[
                {"name":"Plant","relationships":[{"name":"bed","destination":"Bed","inverse":"plants"}]},
                {"name":"Bed","attributes":[{"name":"name","type":"string"}]}]}
            """
        let failure = try #require(error(json))
        expectEqual(
            failure,
            .invalidModel(
                path: "Test.ctxmodel.json", .missingInverse(entity: "Plant", key: "bed", inverse: "plants")))
        expectContains(failure.description, "Plant.bed names inverse 'plants'")
    }

    @Test func aFileThatIsNotJSONOrCannotBeReadIsAnErrorNamingTheFile() throws {
        let notJSON = try #require(error("entities: Plant"))
        expectTrue(
            notJSON.description.hasPrefix("Test.ctxmodel.json: model: not JSON"), Comment(rawValue: notJSON.description)
        )
        let missing = URL(fileURLWithPath: "/nonexistent/Garden.ctxmodel.json")
        #expect(throws: EntityCodeError.self) { try EntityCodeGenerator().source(forModelAt: missing) }
        do {
            _ = try EntityCodeGenerator().source(forModelAt: missing)
        } catch {
            expectTrue(
                error.description.hasPrefix("/nonexistent/Garden.ctxmodel.json: cannot be read"),
                Comment(rawValue: error.description))
        }
    }

    @Test func keysTheGeneratedTypeNeedsForItselfAreErrorsNamingTheEntityAndKey() throws {
        let stored = try #require(
            error(#"{"entities":[{"name":"Plant","attributes":[{"name":"managedObject","type":"string"}]}]}"#))
        expectEqual(
            stored,
            .unusableName(
                entity: "Plant", key: "managedObject",
                reason: "the generated type keeps its ManagedObject under this name"))
        let method = try #require(
            error(
                """
                {"entities":[{"name":"Bed","attributes":[{"name":"addToPlants","type":"string"}],
                  "relationships":[{"name":"plants","destination":"Plant","toMany":true,"inverse":"bed"}]},
                 {"name":"Plant","relationships":[{"name":"bed","destination":"Bed","inverse":"plants"}]}]}
                """))
        expectContains(method.description, "Bed.addToPlants cannot be generated")
        let typeName = try #require(error(#"{"entities":[{"name":"Type"}]}"#))
        expectEqual(
            typeName.description,
            "model: entity Type cannot be generated: 'Type' is a Swift type name that cannot be redeclared; rename it")
    }

    @Test func optionalAttributesReadAsOptionalsAndRequiredOnesAsValues() throws {
        let text = try source(
            """
            {"entities":[{"name":"Plant","attributes":[
                {"name":"name","type":"string"},{"name":"height","type":"double","optional":true}]}]}
            """)
        expectContains(text, "public var name: String {")
        expectContains(text, #"get { managedObject.requiredValue(forKey: "name", as: String.self) }"#)
        expectContains(text, "public var height: Double? {")
        expectContains(text, #"get { managedObject["height", as: Double.self] }"#)
    }

    @Test func keywordsAreEscapedAndTypesAnEntityWouldShadowAreQualified() throws {
        let text = try source(
            """
            {"entities":[
                {"name":"Date","attributes":[{"name":"when","type":"date"},{"name":"in","type":"string"}],
                 "uniqueBy":[["in"]]},
                {"name":"String","attributes":[{"name":"default","type":"string","optional":true}]}]}
            """)
        expectContains(text, "public struct Date: ManagedEntity {")
        expectContains(text, "public var when: Foundation.Date {")
        expectContains(text, "public var `in`: Swift.String {")
        expectContains(text, "public static func find(`in`: Swift.String, in context: ObjectContext)")
        expectContains(text, "public var `default`: Swift.String? {")
        expectContains(text, "public static var `default`: Self")
    }

    @Test func internalAccessDeclaresEverythingInternalAndImportsPlainly() throws {
        let text = try source(
            #"{"entities":[{"name":"Plant","attributes":[{"name":"planted","type":"date"}]}]}"#, access: .internal)
        expectLacks(text, "public ")
        expectContains(text, "\nimport ContextBusObjectGraph\nimport Foundation\n")
        expectContains(text, "internal struct Plant: ManagedEntity {")
    }

    @Test func onlyTheModulesTheTypesUseAreImported() throws {
        let plain = try source(#"{"entities":[{"name":"Plant","attributes":[{"name":"name","type":"string"}]}]}"#)
        expectContains(plain, "public import ContextBusObjectGraph\n\n")
        expectLacks(plain, "import Foundation")
        let json = try source(#"{"entities":[{"name":"Plant","attributes":[{"name":"care","type":"json"}]}]}"#)
        expectContains(json, "public import ContextBusObjectGraph\npublic import ContextBusSupport\n")
        let inside = try EntityCodeGenerator(isInsideObjectGraph: true).source(for: .deviceReadings, from: "m")
        expectLacks(inside, "import ContextBusObjectGraph")
        expectContains(inside, "public import Foundation")
    }

    @Test func theSameModelGivesTheSameSourceFromJSONAndFromAModelValue() throws {
        let fromValue = try EntityCodeGenerator().source(for: .deviceReadings, from: "default.json")
        let json = try JSONWriter().string(Model.deviceReadings.jsonValue)
        let fromJSON = try EntityCodeGenerator().source(forModelJSON: Data(json.utf8), named: "default.json")
        expectEqual(fromJSON, fromValue)
    }
}
