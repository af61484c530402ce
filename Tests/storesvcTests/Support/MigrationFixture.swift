import Foundation

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// The committed sensors database (`Tests/Fixtures/Migration`, made by `scripts/make-migration-fixtures`) and
/// models derived from its model, written as files for `storesvc --model`.
enum MigrationFixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/Migration")

    /// The model the fixture was made with.
    static let model: Model = {
        do {
            return try Model(contentsOf: directory.appendingPathComponent("sensors-v1.json"))
        } catch {
            fatalError("cannot read the fixture's model: \(error)")
        }
    }()

    /// Copies the fixture into `directory` as `store.sqlite` and returns its path.
    @discardableResult
    static func copy(into directory: URL, as name: String = "store.sqlite") throws -> String {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.copyItem(at: Self.directory.appendingPathComponent("sensors-v1.sqlite"), to: url)
        return url.path
    }

    /// The fixture's model changed by `change`.
    static func model(_ change: (inout [EntityDescription]) -> Void) throws -> Model {
        var entities = model.entities
        change(&entities)
        return try Model(entities: entities)
    }

    /// Writes `model` as a model file in `directory`; returns its path.
    static func write(_ model: Model, into directory: URL, as name: String) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data(try JSONWriter(sortsKeys: true).string(model.jsonValue).utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Sensor renamed Probe (its level renamed reading, its note removed, a unit added), Legacy removed.
    static let renamed: Model = {
        do {
            return try model { entities in
                entities[1].name = "Probe"
                entities[1].renamedFrom = "Sensor"
                entities[1].attributes[1] = AttributeDescription("reading", .int, renamedFrom: "level")
                entities[1].attributes.remove(at: 2)
                entities[1].attributes.append(AttributeDescription("unit", .string, optional: true))
                entities[0].relationships[0].destination = "Probe"
                entities[2].relationships[0].destination = "Probe"
                entities.remove(at: 3)
            }
        } catch {
            fatalError("the renamed model is invalid: \(error)")
        }
    }()

    /// Every object of every entity of `store`'s model, by ID.
    static func objects(of store: SQLiteStore) throws -> [ObjectID: ObjectSnapshot] {
        var result: [ObjectID: ObjectSnapshot] = [:]
        for entity in store.model.entities {
            guard case .objects(let objects) = try store.fetch(FetchRequest(entity: entity.name)).content else {
                continue
            }
            for object in objects { result[object.id] = object }
        }
        return result
    }

    /// The objects of the database at `path` (with its `-wal`), read from a copy with `model` (which must be the
    /// model the file is at: a copy, so that nothing migrates the original).
    static func objects(ofDatabaseAt path: String, model: Model, scratch: URL) throws -> [ObjectID: ObjectSnapshot] {
        let copy = scratch.appendingPathComponent("read-\(UUID().uuidString).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy.path + suffix) }
        }
        try FileManager.default.copyItem(atPath: path, toPath: copy.path)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy.path + "-wal")
        }
        let store = try SQLiteStore(url: copy, model: model)
        defer { store.close() }
        return try objects(of: store)
    }

    /// The fixture's objects as `renamed` has them.
    static func renamedObjects(_ before: [ObjectID: ObjectSnapshot]) -> [ObjectID: ObjectSnapshot] {
        var result: [ObjectID: ObjectSnapshot] = [:]
        func renamed(_ id: ObjectID) -> ObjectID {
            ObjectID(entity: id.entity == "Sensor" ? "Probe" : id.entity, number: id.number!)
        }
        for (id, snapshot) in before where id.entity != "Legacy" {
            var values: [String: PropertyValue] = [:]
            for (key, value) in snapshot.values {
                let newKey = id.entity == "Sensor" && key == "level" ? "reading" : key
                if id.entity == "Sensor" && key == "note" { continue }
                switch value {
                case .reference(let other): values[newKey] = .reference(renamed(other))
                case .references(let others): values[newKey] = .references(others.map(renamed))
                default: values[newKey] = value
                }
            }
            if id.entity == "Sensor" { values["unit"] = .null }
            result[renamed(id)] = ObjectSnapshot(id: renamed(id), version: snapshot.version, values: values)
        }
        return result
    }
}
