import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// Saves of a thousand and more objects of several entities, interleaved and related to one
/// another by temporary and reserved IDs, against every store: the planner's bookkeeping by
/// insert position must resolve every reference, keep every inverse, and name failures by the
/// request's own IDs.
struct StoreLargeSaveTests {
    /// 10 shelves (plus one with a reserved permanent ID), 600 books, 300 authors and 90
    /// portraits, interleaved; books name their shelf and two authors, portraits their author,
    /// all by the temporary IDs of the same save (five books by the reserved shelf's permanent ID).
    struct LibraryImport {
        var inserts: [SaveRequest.Insert] = []
        var shelfOfBook: [ObjectID: ObjectID] = [:]
        var authorsOfBook: [ObjectID: [ObjectID]] = [:]
        var authorOfPortrait: [ObjectID: ObjectID] = [:]

        init(reservedShelf: ObjectID) {
            let shelves = (0..<10).map { tmp("Shelf", "s\($0)") }
            let authors = (0..<300).map { tmp("Author", "a\($0)") }
            inserts.append(.init(id: reservedShelf, values: ["name": .string("reserved")]))
            for i in 0..<600 {
                let book = tmp("Book", "b\(i)")
                let shelf = i < 5 ? reservedShelf : shelves[i % 10]
                let pair = [authors[i % 300], authors[(i + 7) % 300]]
                shelfOfBook[book] = shelf
                authorsOfBook[book] = pair
                inserts.append(
                    .init(
                        id: book,
                        values: [
                            "title": .string("book \(i)"), "pages": .int(Int64(i)), "shelf": .reference(shelf),
                            "authors": .references(pair),
                        ]))
                if i < 300 { inserts.append(.init(id: authors[i], values: ["name": .string("author \(i)")])) }
                if i < 90 {
                    let portrait = tmp("Portrait", "p\(i)")
                    authorOfPortrait[portrait] = authors[i * 3]
                    inserts.append(.init(id: portrait, values: ["author": .reference(authors[i * 3])]))
                }
                if i < 10 { inserts.append(.init(id: shelves[i], values: ["name": .string("shelf \(i)")])) }
            }
        }
    }

    @Test(arguments: StoreFactory.all)
    func aThousandObjectSaveResolvesEveryReferenceAmongItsInserts(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let reserved = try #require(try store.obtainPermanentIDs(entity: "Shelf", count: 1).first)
        let library = LibraryImport(reservedShelf: reserved)
        let before = store.lastTransaction
        let result = try store.commit(SaveRequest(inserts: library.inserts))
        let ids = result.ids
        expectTrue(ids.count == library.inserts.count && Set(ids.values).count == library.inserts.count)
        expectEqual(ids[reserved], reserved)
        expectTrue(
            ids.allSatisfy { request, permanent in !permanent.isTemporary && request.entity == permanent.entity })
        expectEqual(result.changes!.inserted.map(\.id), library.inserts.map { ids[$0.id]! })
        expectTrue(result.changes!.updated.isEmpty && result.changes!.deleted.isEmpty)
        expectTrue(Set(result.versions.values) == [1] && result.versions.count == library.inserts.count)

        let committed = try store.everything()
        var booksOfShelf: [ObjectID: [ObjectID]] = [:]
        var booksOfAuthor: [ObjectID: [ObjectID]] = [:]
        for (book, shelf) in library.shelfOfBook {
            let values = try #require(committed[ids[book]!]?.values)
            expectEqual(values["shelf"], .reference(ids[shelf]!))
            let authors = library.authorsOfBook[book]!.map { ids[$0]! }
            expectEqual(values["authors"], .references(authors.sorted()))
            booksOfShelf[ids[shelf]!, default: []].append(ids[book]!)
            for author in authors { booksOfAuthor[author, default: []].append(ids[book]!) }
        }
        for (shelf, books) in booksOfShelf {
            expectEqual(committed[shelf]?.values["books"], .references(books.sorted()))
        }
        for (author, books) in booksOfAuthor {
            expectEqual(committed[author]?.values["books"], .references(books.sorted()))
        }
        for (portrait, author) in library.authorOfPortrait {
            expectEqual(committed[ids[portrait]!]?.values["author"], .reference(ids[author]!))
            expectEqual(committed[ids[author]!]?.values["portrait"], .reference(ids[portrait]!))
        }
        // The change set holds exactly the committed objects, and the history gives it back as is.
        expectEqual(Dictionary(uniqueKeysWithValues: result.changes!.inserted.map { ($0.id, $0) }), committed)
        try expectEqual(store.history(since: before, limit: 10), [result.changes])
    }

    @Test(arguments: StoreFactory.all)
    func failuresInAThousandObjectSaveNameTheInsertsByTheirRequestIDs(factory: StoreFactory) throws {
        let store = try factory.make(TestModels.library)
        let reserved = try #require(try store.obtainPermanentIDs(entity: "Shelf", count: 1).first)
        var library = LibraryImport(reservedShelf: reserved)
        library.inserts[0].values["name"] = .int(7)
        let book = try #require(library.inserts.lastIndex { $0.id.entity == "Book" })
        library.inserts[book].values["title"] = nil
        library.inserts[book].values["authors"] = .references([tmp("Author", "nobody")])
        let error = storeError { try store.commit(SaveRequest(inserts: library.inserts)) }
        guard case .validation(let failures)? = error else { throw error ?? StoreError.unavailable("no error") }
        expectEqual(
            failures,
            [
                .init(id: reserved, key: "name", reason: "expected a string, got a int"),
                .init(
                    id: library.inserts[book].id, key: "authors", reason: "Author/nobody is not inserted by this save"),
                .init(id: reserved, key: "name", reason: "is required"),
                .init(id: library.inserts[book].id, key: "title", reason: "is required"),
            ])
        expectEqual(store.lastTransaction, 0)
    }
}
