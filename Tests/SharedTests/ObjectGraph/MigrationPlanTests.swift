import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// The plan between two models: each kind of difference PROTOCOL.md lists is a possible step, anything else a
/// refusal naming the entity and key, and `renamedFrom` is read only where the stored model lacks the new name.
struct MigrationPlanTests {
    /// Sensor (name, level int, note optional) at a Site; Tag many-to-many with Sensor.
    private static let stored = try! Model(entities: [
        EntityDescription(
            name: "Sensor",
            attributes: [
                AttributeDescription("name", .string, indexed: true),
                AttributeDescription("level", .int),
                AttributeDescription("note", .string, optional: true),
            ],
            relationships: [RelationshipDescription("site", destination: "Site", inverse: "sensors")]),
        EntityDescription(
            name: "Site", attributes: [AttributeDescription("title", .string)],
            relationships: [
                RelationshipDescription("sensors", destination: "Sensor", toMany: true, inverse: "site")
            ]),
    ])

    private func plan(_ change: (inout [EntityDescription]) -> Void) throws -> MigrationPlan {
        var entities = Self.stored.entities
        change(&entities)
        return MigrationPlan(from: Self.stored, to: try Model(entities: entities))
    }

    @Test func theSameModelHasNoSteps() {
        let plan = MigrationPlan(from: Self.stored, to: Self.stored)
        expectEmpty(plan.steps)
        expectTrue(plan.canMigrate)
        expectEqual(plan.summary, "model \(Self.stored.versionHash): no differences")
    }

    @Test func renamedFromIsNotPartOfTheVersionHashButIsInTheJSON() throws {
        var entities = Self.stored.entities
        entities[0].attributes[1].renamedFrom = "lvl"
        entities[1].renamedFrom = "Place"
        let annotated = try Model(entities: entities)
        expectEqual(annotated.versionHash, Self.stored.versionHash)
        let reloaded = try Model(json: annotated.jsonValue)
        expectEqual(reloaded.entity(named: "Sensor")?.attribute(named: "level")?.renamedFrom, "lvl")
        expectEqual(reloaded.entity(named: "Site")?.renamedFrom, "Place")
        // Once migrated, an annotation left in the model file changes nothing.
        expectEmpty(MigrationPlan(from: Self.stored, to: annotated).steps)
    }

    @Test func eachKindOfChangeProtocolMDListsIsAPossibleStep() throws {
        let plan = try plan { entities in
            entities[0].name = "Probe"
            entities[0].renamedFrom = "Sensor"
            entities[0].attributes[0].isIndexed = false
            entities[0].attributes[1] = AttributeDescription("reading", .double, renamedFrom: "level")
            entities[0].attributes[2].isOptional = false
            entities[0].attributes[2].defaultValue = .string("")
            entities[0].attributes.append(AttributeDescription("unit", .string, optional: true))
            entities[0].attributes.append(AttributeDescription("scale", .int, default: .int(1)))
            entities[0].uniqueBy = [["name"]]
            entities[1].relationships[0].destination = "Probe"
            entities[1].attributes[0].isOptional = true
            entities.append(EntityDescription(name: "Tag", attributes: [AttributeDescription("label", .string)]))
        }
        expectTrue(plan.canMigrate, "\(plan.lines)")
        expectEqual(
            plan.lines,
            [
                "ok       Probe: entity renamed from Sensor (objects keep their numbers)",
                "ok       Probe.name: index removed",
                "ok       Probe.reading: attribute renamed from level",
                "ok       Probe.reading: type widened from int to double",
                #"ok       Probe.note: made required (existing nulls take the default "")"#,
                "ok       Probe.unit: attribute added (string, optional)",
                "ok       Probe.scale: attribute added (int, existing objects take the default 1)",
                "ok       Probe: uniqueBy [name] added",
                "ok       Site.title: made optional",
                "ok       Tag: entity added",
            ])
        expectEqual(plan.entityOrigins, ["Probe": "Sensor", "Site": "Site"])
        expectEqual(plan.attributeOrigins["Probe"], ["name": "name", "reading": "level", "note": "note"])
        expectEqual(
            plan.summary,
            "model \(Self.stored.versionHash) → \(plan.target.versionHash): 10 differences, all can be migrated in place"
        )
    }

    @Test func removalsOfEntitiesAttributesAndRelationshipsArePossible() throws {
        let plan = try plan { entities in
            entities[0].attributes.remove(at: 2)
            entities[0].relationships = []
            entities.remove(at: 1)
        }
        expectTrue(plan.canMigrate)
        expectEqual(
            plan.lines,
            [
                "ok       Sensor.note: attribute removed (its values are dropped)",
                "ok       Sensor.site: relationship removed (with its inverse)",
                "ok       Site: entity removed (its objects are deleted)",
            ])
        expectEqual(plan.removedKeys(ofStoredEntity: "Sensor"), ["note", "site"])
        expectNil(plan.newName(ofStoredEntity: "Site"))
    }

    @Test func aRelationshipAddedWithItsInverseIsOneStepPerSide() throws {
        let plan = try plan { entities in
            entities[0].relationships.append(RelationshipDescription("backup", destination: "Site", inverse: "spares"))
            entities[1].relationships.append(
                RelationshipDescription("spares", destination: "Sensor", toMany: true, inverse: "backup"))
        }
        expectEqual(
            plan.lines,
            [
                "ok       Sensor.backup: relationship added (to-one Site, inverse spares)",
                "ok       Site.spares: relationship added (to-many Sensor, inverse backup)",
            ])
    }

    @Test func aNarrowedTypeIsRefusedNamingTheEntityAndKey() throws {
        var entities = Self.stored.entities
        entities[0].attributes[1].type = .double
        let wider = try Model(entities: entities)
        entities[0].attributes[1].type = .int
        let plan = MigrationPlan(from: wider, to: try Model(entities: entities))
        expectFalse(plan.canMigrate)
        expectEqual(
            plan.lines,
            [
                "refused  Sensor.level: cannot be migrated: type changed from double to int (only int to double can be migrated)"
            ])
    }

    @Test func aRequiredAttributeWithoutADefaultIsRefusedAddedOrMadeRequired() throws {
        let plan = try plan { entities in
            entities[0].attributes.append(AttributeDescription("serial", .string))
            entities[0].attributes[2].isOptional = false
        }
        expectEqual(
            plan.refusals.map(\.description),
            [
                "Sensor.note: cannot be migrated: made required without a default (existing nulls would have no value)",
                "Sensor.serial: cannot be migrated: a required attribute added without a default (existing objects would have no value)",
            ])
    }

    @Test func aChangedRelationshipOrDefaultIsRefused() throws {
        let plan = try plan { entities in
            entities[0].relationships[0].deleteRule = .cascade
            entities[0].attributes[1].defaultValue = .int(3)
        }
        expectEqual(
            plan.refusals.map(\.description),
            [
                "Sensor.level: cannot be migrated: default changed from none to 3 (a default can change only when it fills the nulls of an attribute made required)",
                "Sensor.site: cannot be migrated: relationship changed: delete rule nullify → cascade",
            ])
    }

    @Test func aRelationshipPointingAtAnotherEntityIsRefused() throws {
        let plan = try plan { entities in
            entities[0].relationships[0] = RelationshipDescription("site", destination: "Depot", inverse: "sensors")
            entities[1].relationships = []
            entities.append(
                EntityDescription(
                    name: "Depot",
                    relationships: [
                        RelationshipDescription("sensors", destination: "Sensor", toMany: true, inverse: "site")
                    ]))
        }
        expectTrue(
            plan.refusals.map(\.description).contains(
                "Sensor.site: cannot be migrated: relationship changed: destination Site → Depot"))
    }

    @Test func renamedFromThatNamesNothingStoredIsRefused() throws {
        let plan = try plan { entities in
            entities[0].attributes[1] = AttributeDescription("reading", .int, renamedFrom: "levle")
            entities[1].name = "Place"
            entities[1].renamedFrom = "Sites"
            entities[0].relationships[0].destination = "Place"
        }
        let refusals = plan.refusals.map(\.description)
        expectTrue(
            refusals.contains(
                "Sensor.reading: cannot be migrated: renamedFrom 'levle', which the stored model does not have"))
        expectTrue(
            refusals.contains("Place: cannot be migrated: renamedFrom 'Sites', which the stored model does not have"))
    }

    @Test func renamedFromANameTheNewModelKeepsOrThatIsAmbiguousIsRefused() throws {
        let kept = try plan { entities in
            entities[0].attributes.append(AttributeDescription("copy", .string, optional: true, renamedFrom: "note"))
        }
        expectEqual(
            kept.refusals.map(\.description),
            ["Sensor.copy: cannot be migrated: renamedFrom 'note', which Sensor.note takes too"])
        var entities = Self.stored.entities
        entities[0].attributes.append(AttributeDescription("remark", .string, optional: true))
        let both = try Model(entities: entities)
        entities[0].attributes.removeLast()
        entities[0].attributes[2].renamedFrom = "remark"
        let ambiguous = MigrationPlan(from: both, to: try Model(entities: entities))
        expectEqual(
            ambiguous.refusals.map(\.description),
            [
                "Sensor.note: cannot be migrated: renamedFrom 'remark', but the stored model has both Sensor.note and remark"
            ])
    }

    /// Names are never swapped in one model: the stored model has both names, so each `renamedFrom` is ambiguous
    /// (and a model file keeping the annotations would be ambiguous at every later migration).
    @Test func swappingTwoNamesInOneModelIsRefusedAsAmbiguous() throws {
        var entities = Self.stored.entities
        entities[0].attributes.append(AttributeDescription("remark", .string, optional: true))
        let stored = try Model(entities: entities)
        entities[0].attributes[2].renamedFrom = "remark"
        entities[0].attributes[3].renamedFrom = "note"
        let plan = MigrationPlan(from: stored, to: try Model(entities: entities))
        expectEqual(
            plan.refusals.map(\.description),
            [
                "Sensor.note: cannot be migrated: renamedFrom 'remark', but the stored model has both Sensor.note and remark",
                "Sensor.remark: cannot be migrated: renamedFrom 'note', but the stored model has both Sensor.remark and note",
            ])
    }

    @Test func anAttributeThatBecomesARelationshipIsRefused() throws {
        let plan = try plan { entities in
            entities[0].attributes.remove(at: 2)
            entities[0].relationships.append(RelationshipDescription("note", destination: "Site", inverse: "notes"))
            entities[1].relationships.append(
                RelationshipDescription("notes", destination: "Sensor", toMany: true, inverse: "note"))
        }
        expectTrue(
            plan.refusals.map(\.description).contains(
                "Sensor.note: cannot be migrated: changed between attribute and relationship under one name"))
    }

    @Test func aRenamedFromThatCannotBeAnOldNameIsAModelError() {
        let json = #"{"entities":[{"name":"A","attributes":[{"name":"x","type":"int","renamedFrom":"B.x"}]}]}"#
        expectEqual(
            Result { () throws(ModelError) in try Model(json: try! JSONParser().parse(json)) }.map(\.versionHash),
            .failure(.invalidRenamedFrom(entity: "A", key: "x", name: "B.x")))
        let number = #"{"entities":[{"name":"A","renamedFrom":7}]}"#
        expectEqual(
            Result { () throws(ModelError) in try Model(json: try! JSONParser().parse(number)) }.map(\.versionHash),
            .failure(.invalidRenamedFrom(entity: "A", key: nil, name: "7")))
        expectTrue(
            ModelError.invalidRenamedFrom(entity: "A", key: "x", name: "B.x").description.contains(
                "A.x: renamedFrom 'B.x' is not a name"))
        let twice = #"""
            {"entities":[{"name":"A","attributes":[{"name":"x","type":"int","renamedFrom":"old"},
              {"name":"y","type":"int","renamedFrom":"old"}]}]}
            """#
        expectEqual(
            Result { () throws(ModelError) in try Model(json: try! JSONParser().parse(twice)) }.map(\.versionHash),
            .failure(.duplicateRenamedFrom(entity: "A", key: "y", name: "old")))
    }

    @Test func uniqueKeysAreComparedUnderTheNewNames() throws {
        var entities = Self.stored.entities
        entities[0].uniqueBy = [["name", "site"]]
        let stored = try Model(entities: entities)
        entities[0].attributes[0] = AttributeDescription("label", .string, indexed: true, renamedFrom: "name")
        entities[0].uniqueBy = [["site", "label"]]
        expectEmpty(
            MigrationPlan(from: stored, to: try Model(entities: entities)).steps.filter {
                if case .attributeRenamed = $0.change { return false }
                return true
            })
        entities[0].uniqueBy = []
        expectEqual(
            MigrationPlan(from: stored, to: try Model(entities: entities)).lines.last,
            "ok       Sensor: uniqueBy [label, site] removed")
    }
}
