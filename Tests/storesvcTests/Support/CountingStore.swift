import Foundation

@testable import ContextBusObjectGraph
@testable import ContextBusSQLite
@testable import ContextBusSupport

/// A store that forwards to a SQLite store and counts the object reads (`objects(with:)`) made through it: how
/// `completingToManyValues` reads to-many sets, and relationship key paths read related objects.
final class CountingStore: PersistentStore {
    let base: SQLiteStore
    private let reads = Locked<[ObjectID]>([])

    init(_ base: SQLiteStore) {
        self.base = base
    }

    /// The IDs read through `objects(with:)` so far, in order.
    var readIDs: [ObjectID] { reads.withLock { $0 } }

    var model: Model { base.model }
    var lastTransaction: Int64 { base.lastTransaction }

    func fetch(_ request: FetchRequest) throws -> StoreFetchResult { try base.fetch(request) }

    func objects(with ids: [ObjectID]) throws -> StoreObjectsResult {
        reads.withLock { $0 += ids }
        return try base.objects(with: ids)
    }

    func save(_ request: SaveRequest) throws -> SaveResult { try base.save(request) }

    func obtainPermanentIDs(entity: String, count: Int) throws -> [ObjectID] {
        try base.obtainPermanentIDs(entity: entity, count: count)
    }

    func history(since: Int64, limit: Int) throws -> [ChangeSet] { try base.history(since: since, limit: limit) }

    func observeChanges(_ observer: @escaping @Sendable (ChangeSet) -> Void) -> StoreObservation {
        base.observeChanges(observer)
    }
}

extension PersistentStore {
    /// Saves one `Reading` of `device` and returns its ID.
    @discardableResult
    func insertReading(device: ObjectID?, value: UInt8 = 1) throws -> ObjectID {
        let temporary = ObjectID(entity: "Reading", temporaryReference: "r")
        let values: [String: PropertyValue] = [
            "characteristic": .string("2a19"), "value": .binary(Data([value])),
            "time": .date(Date(timeIntervalSince1970: Double(value))),
            "device": device.map(PropertyValue.reference) ?? .null,
        ]
        return try save(SaveRequest(inserts: [.init(id: temporary, values: values)])).ids[temporary]!
    }
}
