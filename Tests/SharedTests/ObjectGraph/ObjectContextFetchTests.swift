import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph

struct ObjectContextFetchTests {
    @Test(arguments: StoreFactory.all)
    func fetchIncludesPendingInsertsUpdatesAndDeletes(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(4)  // d0 … d3
        let context = fixture.makeContext()
        try context.performAndWait {
            context.object(with: ids[1])["name", as: String.self] = "zz"  // moves to the end
            context.delete(context.object(with: ids[2]))
            context.makeDevice("a-new")
            let request = FetchRequest(entity: "Device", sortDescriptors: [.init("name")])
            let names = try context.fetch(request).map { $0.string("name") ?? "nil" }
            expectEqual(names, ["a-new", "d0", "d3", "zz"])
            try expectEqual(context.count(for: request), 4)

            var window = request
            window.fetchOffset = 1
            window.fetchLimit = 2
            expectEqual(try context.fetch(window).map { $0.string("name") }, ["d0", "d3"])
            try expectEqual(context.count(for: window), 2)
            let descending = FetchRequest(
                entity: "Device", sortDescriptors: [.init("name", ascending: false)], fetchLimit: 1)
            expectEqual(try context.fetch(descending).map { $0.string("name") }, ["zz"])
        }
    }

    @Test(arguments: StoreFactory.all)
    func fetchWithPredicateEvaluatesPendingChangesInMemory(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(3)
        let context = fixture.makeContext()
        try context.performAndWait {
            let request = FetchRequest(
                entity: "Device", predicate: try ObjectPredicate(format: "name BEGINSWITH $prefix"),
                arguments: ["prefix": .string("d")], sortDescriptors: [.init("name")])
            context.object(with: ids[0])["name", as: String.self] = "x0"  // leaves the set
            context.makeDevice("d9")  // enters it
            expectEqual(try context.fetch(request).map { $0.string("name") }, ["d1", "d2", "d9"])
            try expectEqual(context.count(for: request), 3)
        }
    }

    @Test(arguments: StoreFactory.all)
    func sortAndPredicateThroughToOneSeeARelatedObjectsPendingChange(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(3, readingsEach: 1)
        let context = fixture.makeContext()
        try context.performAndWait {
            context.object(with: ids[0])["name", as: String.self] = "z-last"
            let sorted = FetchRequest(
                entity: "Reading", sortDescriptors: [.init("device.name", ascending: true)])
            let order = try context.fetch(sorted).map { $0.relatedObject(forKey: "device")?.string("name") }
            expectEqual(order, ["d1", "d2", "z-last"])
            let filtered = FetchRequest(
                entity: "Reading", predicate: try ObjectPredicate(format: "device.name == 'z-last'"))
            try expectEqual(context.count(for: filtered), 1)
        }
    }

    @Test(arguments: StoreFactory.all)
    func childFetchCountsTheParentsPendingChangesToo(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let ids = try fixture.seedDevices(3)
        let root = fixture.makeContext("root")
        root.performAndWait {
            root.delete(root.object(with: ids[0]))
            root.makeDevice("root-new")
        }
        let child = ObjectContext(parent: root, name: "child")
        try child.performAndWait { () throws in
            child.object(with: ids[1])["name", as: String.self] = "child-renamed"
            child.makeDevice("child-new")
            let request = FetchRequest(entity: "Device", sortDescriptors: [.init("name")])
            expectEqual(
                try child.fetch(request).map { $0.string("name") }, ["child-new", "child-renamed", "d2", "root-new"])
            try expectEqual(child.count(for: request), 4)
        }
    }

    /// Random pending changes in a context (and, half the time, in its parent) never change a
    /// fetch's answer across the save: before the save it is computed from pending changes, after
    /// it from the store alone.
    @Test(arguments: StoreFactory.all)
    func fetchGivesTheSameAnswerBeforeAndAfterSaveUnderRandomChanges(_ factory: StoreFactory) throws {
        var random = SeededRandom(seed: 0xC0FFEE)
        for round in 0..<24 {
            let fixture = try ContextFixture(factory)
            let names = ["a", "b", "b", "c", "d"]
            let seeded = try seedRandomDevices(fixture, count: 12, names: names, random: &random)
            let root = fixture.makeContext("root")
            let nested = round % 2 == 1
            let context = nested ? ObjectContext(parent: root, name: "child") : root
            if nested {
                root.performAndWait { applyRandomChanges(root, seeded, names: names, count: 4, random: &random) }
            }
            let requests = try makeRandomRequests(count: 6, random: &random)
            let before = try context.performAndWait {
                applyRandomChanges(context, seeded, names: names, count: 8, random: &random)
                return try requests.map { request in (try context.fetch(request), try context.count(for: request)) }
            }
            try context.performAndWait { try context.save() }
            if nested { try root.performAndWait { try root.save() } }
            try context.performAndWait {
                for (request, expected) in zip(requests, before) {
                    let objects = try context.fetch(request)
                    expectEqual(
                        objects.map(ObjectIdentifier.init), expected.0.map(ObjectIdentifier.init),
                        "round \(round): \(request)")
                    try expectEqual(context.count(for: request), expected.1, "round \(round): \(request)")
                    // The store alone, through a fresh context, agrees.
                    let fresh = fixture.makeContext("fresh")
                    let committed = try fresh.performAndWait { try fresh.fetchIDs(request) }
                    expectEqual(committed, expected.0.map(\.objectID), "round \(round): \(request)")
                }
            }
        }
    }

    @Test(arguments: StoreFactory.all)
    func badRequestsAreRefusedWithTheFieldAtFault(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let context = fixture.makeContext()
        context.performAndWait {
            expectEqual(
                storeError { _ = try context.fetch(FetchRequest(entity: "Nope")) },
                .invalidRequest(field: "entity", message: "the model has no entity 'Nope'"))
            guard
                case .invalidRequest(field: "sort", _)? = storeError({
                    _ = try context.fetch(FetchRequest(entity: "Device", sortDescriptors: [.init("readings.value")]))
                })
            else {
                Issue.record("a sort through a to-many must be refused")
                return
            }
            guard
                case .invalidRequest(field: "where", _)? = storeError({
                    _ = try context.fetch(
                        FetchRequest(entity: "Device", predicate: try ObjectPredicate(format: "name == $missing")))
                })
            else {
                Issue.record("an unbound variable must be refused")
                return
            }
        }
    }

    // MARK: - Random workloads

    private func seedRandomDevices(
        _ fixture: ContextFixture, count: Int, names: [String], random: inout SeededRandom
    ) throws -> [ObjectID] {
        let context = fixture.makeContext("seed")
        var picks: [(String?, Bool)] = []
        for _ in 0..<count {
            picks.append((random.int(6) == 0 ? nil : names.randomElement(using: &random)!, random.coin()))
        }
        return try context.performAndWait {
            let devices = picks.enumerated().map { index, pick in
                let (name, connected) = pick
                let device = context.insert(entity: "Device")
                device["address", as: String.self] = "addr-\(index)"  // unique by address
                device["name", as: String.self] = name
                device["connected", as: Bool.self] = connected
                return device
            }
            try context.save()
            return devices.map(\.objectID)
        }
    }

    private func applyRandomChanges(
        _ context: ObjectContext, _ ids: [ObjectID], names: [String], count: Int, random: inout SeededRandom
    ) {
        for _ in 0..<count {
            switch random.int(4) {
            case 0:
                // Devices are unique by address: each new one gets its own.
                let device = context.makeDevice(names.randomElement(using: &random)!, address: UUID().uuidString)
                device["connected", as: Bool.self] = random.coin()
            case 1:
                // existingObject: the object may be gone in the parent already.
                guard let device = try? context.existingObject(with: ids.randomElement(using: &random)!) else {
                    continue
                }
                context.delete(device)
            default:
                guard let device = try? context.existingObject(with: ids.randomElement(using: &random)!) else {
                    continue
                }
                if random.coin() {
                    device["name", as: String.self] = random.int(5) == 0 ? nil : names.randomElement(using: &random)!
                } else {
                    device["connected", as: Bool.self] = random.coin()
                }
            }
        }
    }

    private func makeRandomRequests(count: Int, random: inout SeededRandom) throws -> [FetchRequest] {
        let predicates: [ObjectPredicate?] = [
            nil, try ObjectPredicate(format: "connected == true"), try ObjectPredicate(format: "name IN {'a', 'b'}"),
            try ObjectPredicate(format: "name == nil OR name > 'b'"),
        ]
        return (0..<count).map { _ in
            var sort: [ObjectSortDescriptor] = []
            if random.coin() { sort.append(.init("name", ascending: random.coin())) }
            if random.coin() { sort.append(.init("connected", ascending: random.coin())) }
            return FetchRequest(
                entity: "Device", predicate: predicates.randomElement(using: &random)!, sortDescriptors: sort,
                fetchLimit: random.coin() ? random.int(6) : nil,
                fetchOffset: random.int(4))
        }
    }
}
