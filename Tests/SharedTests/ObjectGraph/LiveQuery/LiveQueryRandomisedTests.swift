import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

/// A hundred rounds (times `TestScale.factor`) of random inserts, updates and deletes saved by workers
/// and merged into the main context: after every round, the previous result with the live query's diffs applied must
/// be exactly what a fresh fetch returns (objects, order, sections and values).
struct LiveQueryRandomisedTests {
    struct Scenario: Sendable, CustomTestStringConvertible {
        var seed: UInt64
        var sectionKey: String?
        var predicate: String?
        var limit: Int?
        var testDescription: String {
            "seed \(seed), sections \(sectionKey ?? "none"), where \(predicate ?? "-"), limit \(limit.map(String.init) ?? "-")"
        }
    }

    static let scenarios: [Scenario] = [
        Scenario(seed: 1, sectionKey: nil, predicate: "connected == YES", limit: nil),
        Scenario(seed: 2, sectionKey: "name", predicate: nil, limit: nil),
        Scenario(seed: 3, sectionKey: "name", predicate: "connected == NO", limit: nil),
        Scenario(seed: 4, sectionKey: nil, predicate: "connected == YES", limit: 12),
    ]

    static let rounds = 100 * TestScale.factor

    /// One row as the test keeps it: the object and the values it showed.
    struct Row: Equatable, CustomStringConvertible {
        var id: ObjectID
        var values: [String]
        var description: String { "\(id): \(values.joined(separator: " "))" }
    }

    struct Section: Equatable {
        var value: PropertyValue
        var rows: [Row]
    }

    @Test(arguments: scenarios)
    func appliedDiffsAlwaysEqualAFreshFetch(_ scenario: Scenario) throws {
        let fixture = try StackFixture()
        let main = fixture.stack.main
        var random = SeededGenerator(seed: scenario.seed)
        let names = ["a", "b", "c", "d", "e", "f"]
        let request = FetchRequest(
            entity: "Device", predicate: try scenario.predicate.map { try ObjectPredicate(format: $0) },
            sortDescriptors: [ObjectSortDescriptor("name"), ObjectSortDescriptor("address")],
            fetchLimit: scenario.limit)
        var known: [ObjectID] = []
        var serial = 0

        func randomDevice(in worker: ObjectContext) {
            serial += 1
            let device = worker.insert(entity: "Device")
            device["address", as: String.self] = String(format: "AA:%05d", serial)
            device["name", as: String.self] = names.randomElement(using: &random)
            device["connected", as: Bool.self] = Bool.random(using: &random)
        }
        let seedWorker = fixture.stack.newWorker()
        known = try seedWorker.performAndWait {
            for _ in 0..<20 { randomDevice(in: seedWorker) }
            let ids = seedWorker.insertedObjects.map(\.objectID).sorted()
            try seedWorker.save()
            return ids
        }
        fixture.fireBackgroundSave()

        let query = try LiveQuery(request, in: main, sectionKey: scenario.sectionKey)
        let updates = Collected<LiveQueryUpdate>()
        let disposable = query.updates.startWithValues { updates.append($0) }
        defer { disposable.dispose() }
        drain(main)
        drain(main)
        let initial = try #require(updates.all.first)
        expectNil(initial.diff)
        var mirror = rows(of: initial.snapshot, in: main)
        expectEqual(mirror, freshFetch(request, sectionKey: scenario.sectionKey, in: main))
        var applied = 1
        var diffsSeen = 0

        for round in 0..<Self.rounds {
            let worker = fixture.stack.newWorker()
            let currentKnown = known
            let (inserted, deleted) = try worker.performAndWait { () throws -> ([ObjectID], Set<ObjectID>) in
                var deleted: Set<ObjectID> = []
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    let alive = currentKnown.filter { !deleted.contains($0) }
                    let choice = alive.isEmpty ? 0 : Int.random(in: 0..<10, using: &random)
                    switch choice {
                    case 0..<3:
                        randomDevice(in: worker)
                    case 3..<8:
                        let device = worker.object(with: alive.randomElement(using: &random)!)
                        switch Int.random(in: 0..<3, using: &random) {
                        case 0: device["name", as: String.self] = names.randomElement(using: &random)
                        case 1: device["connected", as: Bool.self] = !(device.bool("connected") ?? false)
                        default:
                            device["lastSeen", as: Date.self] = Date(
                                timeIntervalSince1970: Double(Int.random(in: 0..<1_000, using: &random)))
                        }
                    default:
                        let id = alive.randomElement(using: &random)!
                        worker.delete(worker.object(with: id))
                        deleted.insert(id)
                    }
                }
                let inserted = worker.insertedObjects.map(\.objectID).sorted()
                try worker.save()
                return (inserted, deleted)
            }
            known = known.filter { !deleted.contains($0) } + inserted
            if Int.random(in: 0..<15, using: &random) == 0 { fixture.fireBackgroundSave() }
            drain(main)
            drain(main)

            for update in updates.all.dropFirst(applied) {
                let diff = try #require(update.diff, "round \(round): only the first update may lack a diff")
                expectFalse(diff.isEmpty)
                mirror = apply(diff, to: mirror, in: main)
                diffsSeen += 1
            }
            applied = updates.all.count
            let fresh = freshFetch(request, sectionKey: scenario.sectionKey, in: main)
            let resolved = resolve(mirror, in: main)
            expectEqual(resolved, fresh, "round \(round): diffs applied \(resolved) ≠ fresh fetch \(fresh)")
            if resolved != fresh { return }
        }
        // The scenario must have exercised the query, not idled.
        expectTrue(diffsSeen > Self.rounds / 3)
    }

    // MARK: - The test's own model of a result (independent of LiveQuerySnapshot.applying)

    private func values(of id: ObjectID, in main: ObjectContext) -> [String] {
        let object = main.object(with: id)
        return ["name", "connected", "lastSeen", "address"].map { object.value(forKey: $0).description }
    }

    private func rows(of snapshot: LiveQuerySnapshot, in main: ObjectContext) -> [Section] {
        main.performAndWait {
            snapshot.sections.map { section in
                Section(
                    value: section.value, rows: section.objectIDs.map { Row(id: $0, values: values(of: $0, in: main)) })
            }
        }
    }

    private func freshFetch(_ request: FetchRequest, sectionKey: String?, in main: ObjectContext) -> [Section] {
        main.performAndWait {
            let objects = try! main.fetch(request)
            guard let sectionKey else {
                return [
                    Section(
                        value: .null,
                        rows: objects.map { Row(id: $0.objectID, values: values(of: $0.objectID, in: main)) })
                ]
            }
            var sections: [Section] = []
            for object in objects {
                let row = Row(id: object.objectID, values: values(of: object.objectID, in: main))
                let value = object.value(forKey: sectionKey)
                if let last = sections.indices.last, sections[last].value == value {
                    sections[last].rows.append(row)
                } else {
                    sections.append(Section(value: value, rows: [row]))
                }
            }
            return sections
        }
    }

    /// Rows keep the IDs they were shown with; the root saving gives objects permanent IDs
    /// without a diff, so compare through the IDs the objects have now.
    private func resolve(_ sections: [Section], in main: ObjectContext) -> [Section] {
        main.performAndWait {
            sections.map { section in
                Section(
                    value: section.value,
                    rows: section.rows.map { Row(id: main.object(with: $0.id).objectID, values: $0.values) })
            }
        }
    }

    /// Applies a diff like a table view would: removals at old positions, section deletes and
    /// inserts, then insertions at new positions in ascending order; rows inserted, moved or
    /// updated are re-read, every other row keeps the values it showed.
    private func apply(_ diff: LiveQueryDiff, to sections: [Section], in main: ObjectContext) -> [Section] {
        var sections = sections
        var removals = diff.deleted.map(\.path) + diff.moved.map(\.from)
        removals.sort { ($0.section, $0.item) > ($1.section, $1.item) }
        for path in removals { sections[path.section].rows.remove(at: path.item) }
        for change in diff.deletedSections.sorted(by: { $0.index > $1.index }) {
            expectEmpty(sections[change.index].rows, "a deleted section still has rows")
            sections.remove(at: change.index)
        }
        for change in diff.insertedSections.sorted(by: { $0.index < $1.index }) {
            sections.insert(Section(value: change.value, rows: []), at: change.index)
        }
        var additions = diff.inserted.map { ($0.path, $0.objectID) } + diff.moved.map { ($0.to, $0.objectID) }
        additions.sort { ($0.0.section, $0.0.item) < ($1.0.section, $1.0.item) }
        main.performAndWait {
            for (path, id) in additions {
                sections[path.section].rows.insert(Row(id: id, values: values(of: id, in: main)), at: path.item)
            }
            for change in diff.updated {
                let path = change.path
                let shown = main.object(with: sections[path.section].rows[path.item].id).objectID
                expectEqual(shown, main.object(with: change.objectID).objectID, "update at the wrong row")
                sections[path.section].rows[path.item].values = values(of: change.objectID, in: main)
            }
        }
        return sections
    }
}
