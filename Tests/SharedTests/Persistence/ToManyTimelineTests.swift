import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// `ToManyTimeline`: the members of a to-many set as of an earlier transaction, from the current ones and the
/// later transactions' change sets.
struct ToManyTimelineTests {
    /// The to-many sets of `ids` in the store now: object → key → members (`nil` for a gone object).
    private static func sets(
        of ids: [ObjectID], in store: any PersistentStore
    ) throws -> [ObjectID: [String: [ObjectID]]] {
        var sets: [ObjectID: [String: [ObjectID]]] = [:]
        for snapshot in try store.objects(with: ids).objects {
            for key in ["books"] { sets[snapshot.id, default: [:]][key] = snapshot.values[key]?.referencedIDs ?? [] }
        }
        return sets
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func membersAsOfEveryRecordedTransactionAreTheOnesTheStoreHadThen(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let store = InMemoryStore(model: TestModels.library)
        let authors = try (0..<4).map { try store.insert("Author", ["name": .string("a\($0)")]) }
        let shelves = try (0..<3).map { try store.insert("Shelf", ["name": .string("s\($0)")]) }
        let owners = authors + shelves
        let first = store.lastTransaction
        var books: [ObjectID] = []
        // Transaction → the sets of every owner that exists after it.
        var expected: [Int64: [ObjectID: [String: [ObjectID]]]] = [first: try Self.sets(of: owners, in: store)]
        var deletedAuthor = false
        for _ in 0..<80 {
            let someAuthors = authors.dropFirst(deletedAuthor ? 1 : 0).filter { _ in Bool.random(using: &random) }
            let shelf = shelves.randomElement(using: &random).map(PropertyValue.reference) ?? .null
            let book = books.randomElement(using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1:
                books.append(
                    try store.insert(
                        "Book", ["title": .string("b"), "shelf": shelf, "authors": .references(someAuthors)]))
            case 2 where book != nil:
                try store.commit(SaveRequest(updates: [.init(id: book!, version: nil, values: ["shelf": shelf])]))
            case 3 where book != nil:
                try store.commit(
                    SaveRequest(updates: [.init(id: book!, version: nil, values: ["authors": .references(someAuthors)])]
                    ))
            case 4 where book != nil:
                try store.commit(SaveRequest(deletes: [.init(id: book!, version: nil)]))
                books.removeAll { $0 == book }
            case 5 where !deletedAuthor && store.lastTransaction > first + 40:
                try store.commit(SaveRequest(deletes: [.init(id: authors[0], version: nil)]))
                deletedAuthor = true
            default:
                let author = authors[1 + Int.random(in: 0..<3, using: &random)]
                let chosen = books.filter { _ in Bool.random(using: &random) }
                try store.commit(
                    SaveRequest(updates: [.init(id: author, version: nil, values: ["books": .references(chosen)])]))
            }
            expected[store.lastTransaction] = try Self.sets(of: owners, in: store)
        }
        expectTrue(deletedAuthor)
        var timeline = ToManyTimeline(model: store.model, after: first)
        for changes in try store.history(since: first, limit: 1_000) { try timeline.record(changes) }
        let read = try store.objects(with: owners)
        let current = Dictionary(read.objects.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        var mismatches: [String] = []
        for (txn, owners) in expected {
            for (id, keys) in owners {
                for (key, members) in keys {
                    let told = try timeline.members(
                        of: id, key: key, asOf: txn, from: current[id]?.values[key]?.referencedIDs, after: read.txn)
                    if told != members { mismatches.append("\(id).\(key) as of \(txn): \(told), expected \(members)") }
                }
            }
        }
        expectEqual(mismatches, [])
    }

    @Test func forgettingDropsTheStepsUpToATransactionAndOnlyLaterOnesCanBeAskedFor() throws {
        let store = InMemoryStore(model: TestModels.library)
        let author = try store.insert("Author", ["name": .string("a")])
        let start = store.lastTransaction
        let books = try (0..<4).map {
            try store.insert("Book", ["title": .string("\($0)"), "authors": .references([author])])
        }
        var timeline = ToManyTimeline(model: store.model, after: start)
        for changes in try store.history(since: start, limit: 10) { try timeline.record(changes) }
        expectEqual(timeline.stepCount, 4)
        timeline.forget(through: start + 2)
        expectEqual(timeline.stepCount, 2)
        let now = store.lastTransaction
        try expectEqual(
            timeline.members(of: author, key: "books", asOf: start + 2, from: books, after: now), Array(books[..<2]))
        #expect(throws: ToManyTimelineError.notRecorded(start: start + 2, end: now, txn: start + 1, through: now)) {
            try timeline.members(of: author, key: "books", asOf: start + 1, from: books, after: now)
        }
        timeline.forget(through: now + 5)
        expectEqual(timeline.stepCount, 0)
        expectEqual(timeline.end, now + 5)
    }

    @Test func aChangeSetThatIsNotTheNextTransactionIsRefused() throws {
        let store = InMemoryStore(model: TestModels.library)
        try store.insert("Author", ["name": .string("a")])
        try store.insert("Author", ["name": .string("b")])
        var timeline = ToManyTimeline(model: store.model)
        let history = try store.history(since: 0, limit: 10)
        #expect(throws: ToManyTimelineError.notRecordedInOrder(end: 0, txn: 2)) { try timeline.record(history[1]) }
        try timeline.record(history[0])
        #expect(throws: ToManyTimelineError.notRecordedInOrder(end: 1, txn: 1)) { try timeline.record(history[0]) }
    }

    @Test func anObjectGoneWithoutARecordedDeletionHasNoKnownMembers() throws {
        let timeline = ToManyTimeline(model: TestModels.library, after: 3)
        let author = oid("Author", 1)
        #expect(throws: ToManyTimelineError.membersUnknown(author, key: "books", txn: 3)) {
            try timeline.members(of: author, key: "books", asOf: 3, from: nil, after: 3)
        }
        try expectEqual(
            timeline.members(of: author, key: "books", asOf: 3, from: [oid("Book", 2)], after: 3), [oid("Book", 2)])
    }
}
