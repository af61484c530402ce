import Foundation
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite

/// Makes the stores the semantic suites run against: every `PersistentStore` implementation.
struct StoreFactory: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable (Model) throws -> TestStore

    var testDescription: String { name }

    static let inMemory = StoreFactory(name: "InMemoryStore") { model in
        TestStore(store: InMemoryStore(model: model, historyRetention: 50), directory: nil)
    }

    static let sqlite = StoreFactory(name: "SQLiteStore") { model in
        let directory = try TestStore.makeDirectory()
        let store = try SQLiteStore(
            url: directory.appendingPathComponent("store.sqlite"), model: model,
            configuration: .init(historyRetention: 50))
        return TestStore(store: store, directory: directory)
    }

    static let all: [StoreFactory] = [inMemory, sqlite]
}

/// A store under test and the temporary directory it lives in: forwards to the store, and
/// closes it and removes the directory when released.
final class TestStore: PersistentStore {
    let store: any PersistentStore
    let directory: URL?

    init(store: any PersistentStore, directory: URL?) {
        self.store = store
        self.directory = directory
    }

    deinit {
        (store as? SQLiteStore)?.close()
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// A fresh unique temporary directory.
    static func makeDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ctxbus-store-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    var model: Model { store.model }
    var lastTransaction: Int64 { store.lastTransaction }
    func fetch(_ request: FetchRequest) throws -> StoreFetchResult { try store.fetch(request) }
    func objects(with ids: [ObjectID]) throws -> StoreObjectsResult { try store.objects(with: ids) }
    func save(_ request: SaveRequest) throws -> SaveResult { try store.save(request) }
    func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID] {
        try store.obtainPermanentIDs(entity: entity, count: count)
    }
    func history(since: Int64, limit: Int) throws -> [ChangeSet] { try store.history(since: since, limit: limit) }
    func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        store.observeChanges(observer)
    }
}

/// Models used by the store tests.
enum TestModels {
    /// Shelves hold books (deny), books have authors (many-to-many), authors have one portrait
    /// (one-to-one, cascade from the author), plus one attribute of every type.
    static let library: Model = try! Model(entities: [
        EntityDescription(
            name: "Shelf", attributes: [AttributeDescription("name", .string)],
            relationships: [
                RelationshipDescription(
                    "books", destination: "Book", toMany: true, inverse: "shelf", deleteRule: .deny)
            ]),
        EntityDescription(
            name: "Book",
            attributes: [
                AttributeDescription("title", .string, indexed: true),
                AttributeDescription("pages", .int, default: .int(0)),
                AttributeDescription("price", .double, optional: true),
                AttributeDescription("inPrint", .bool, default: .bool(true)),
                AttributeDescription("published", .date, optional: true),
                AttributeDescription("cover", .binary, optional: true),
                AttributeDescription("isbn", .uuid, optional: true),
                AttributeDescription("meta", .json, optional: true),
            ],
            relationships: [
                RelationshipDescription("shelf", destination: "Shelf", inverse: "books"),
                RelationshipDescription("authors", destination: "Author", toMany: true, inverse: "books"),
            ]),
        EntityDescription(
            name: "Author", attributes: [AttributeDescription("name", .string, indexed: true)],
            relationships: [
                RelationshipDescription("books", destination: "Book", toMany: true, inverse: "authors"),
                RelationshipDescription(
                    "portrait", destination: "Portrait", inverse: "author", deleteRule: .cascade),
            ]),
        EntityDescription(
            name: "Portrait", attributes: [AttributeDescription("caption", .string, optional: true)],
            relationships: [RelationshipDescription("author", destination: "Author", inverse: "portrait")]),
    ])
}

/// Shorthands for building requests in tests.
func tmp(_ entity: String, _ ref: String) -> ObjectID { ObjectID(entity: entity, temporaryReference: ref) }
func oid(_ entity: String, _ number: Int64) -> ObjectID { ObjectID(entity: entity, number: number) }

extension PersistentStore {
    /// `save`, with a result that may be ignored.
    @discardableResult
    func commit(_ request: SaveRequest) throws -> SaveResult { try save(request) }

    /// Inserts one object and returns its permanent ID.
    @discardableResult
    func insert(_ entity: String, _ values: [String: PropertyValue]) throws -> ObjectID {
        let id = ObjectID.makeTemporary(entity: entity)
        return try commit(SaveRequest(inserts: [.init(id: id, values: values)])).ids[id]!
    }

    /// The committed snapshot of `id`, or `nil`.
    func snapshot(_ id: ObjectID) throws -> ObjectSnapshot? {
        try objects(with: [id]).objects.first
    }

    /// Every object of `entity`, sorted by ID.
    func all(_ entity: String) throws -> [ObjectSnapshot] {
        guard case .objects(let objects) = try fetch(FetchRequest(entity: entity)).content else { return [] }
        return objects.sorted { $0.id < $1.id }
    }

    /// The `address` of every `Device`, in ID order.
    func deviceAddresses() throws -> [String] {
        try all("Device").compactMap { snapshot in
            guard case .string(let address)? = snapshot.values["address"] else { return nil }
            return address
        }
    }

    /// Every object of every entity of the model, by ID.
    func everything() throws -> [ObjectID: ObjectSnapshot] {
        var result: [ObjectID: ObjectSnapshot] = [:]
        for entity in model.entities {
            for snapshot in try all(entity.name) { result[snapshot.id] = snapshot }
        }
        return result
    }
}

/// The error `body` throws, as a `StoreError` (fails the test when it throws nothing or something else).
func storeError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> StoreError? {
    do {
        try body()
        Issue.record("expected a StoreError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as StoreError {
        return error
    } catch {
        Issue.record("expected a StoreError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
