import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusReactive
@testable import ContextBusSQLite

/// The default model's generated types (`Device`, `Reading`, shipped in `ContextBusObjectGraph`) over the dynamic
/// API: typed attributes and relationships, typed fetch requests and sort keys, `find` by the unique key, typed live
/// queries and the background ID fetch, on both stores.
struct TypedEntityTests {
    @Test func typedPropertiesReadAndWriteWhatTheDynamicAPIHolds() throws {
        let context = ObjectContext(store: InMemoryStore(model: .deviceReadings))
        try context.performAndWait {
            let device = context.insert(Device.self)
            expectFalse(device.connected)  // the model's default
            expectNil(device.name)
            expectNil(device.lastSeen)
            device.address = "AA:01"
            device.name = "thermo"
            device.connected = true
            device.lastSeen = Date(timeIntervalSince1970: 100)
            expectEqual(device.managedObject["address", as: String.self], "AA:01")
            expectEqual(device.managedObject.value(forKey: "connected"), .bool(true))
            device.managedObject["name", as: String.self] = "renamed"
            expectEqual(device.name, "renamed")
            device.name = nil
            expectEqual(device.managedObject.value(forKey: "name"), .null)
            expectTrue(device.isInserted)
            expectTrue(device.objectID.isTemporary)
            try context.save()
            expectFalse(device.objectID.isTemporary)
            expectEqual(device.version, 1)
            expectEqual(Device(device.managedObject), device)
            expectNil(Reading(device.managedObject))
        }
    }

    @Test func relationshipsKeepTheirInverseWhicheverSideIsSet() throws {
        let context = ObjectContext(store: InMemoryStore(model: .deviceReadings))
        context.performAndWait {
            let device = context.insert(Device.self)
            let first = context.makeTypedReading(characteristic: "2a19")
            let second = context.makeTypedReading(characteristic: "2a6e")
            first.device = device
            expectEqual(device.readings, [first])
            device.addToReadings(second)
            expectEqual(second.device, device)
            expectEqual(Set(device.readings), [first, second])
            device.removeFromReadings(first)
            expectNil(first.device)
            device.readings = [first]
            expectNil(second.device)
            expectEqual(first.device, device)
            second.device = nil
            expectEqual(device.readings, [first])
        }
    }

    @Test(arguments: StoreFactory.all)
    func theDefaultModelsTypesRoundTripThroughAStore(_ factory: StoreFactory) throws {
        let fixture = try ContextFixture(factory)
        let writer = fixture.makeContext("writer")
        try writer.performAndWait {
            for (name, address) in [("beta", "AA:02"), ("alpha", "AA:01")] {
                let device = writer.insert(Device.self)
                device.address = address
                device.name = name
                for second in 1...3 {
                    let reading = writer.makeTypedReading(characteristic: "2a19", time: Double(second))
                    reading.value = Data([UInt8(second)])
                    reading.number = Double(second * 10)
                    reading.device = device
                }
            }
            try writer.save()
        }
        let reader = fixture.makeContext("reader")
        let found = try reader.performAndWait { () throws -> [String] in
            let request = try Reading.fetchRequest(
                where: "number > $min", ["min": .double(10)], sortedBy: [.device(.name), .time.descending])
            return try reader.fetch(request).map { reading in
                "\(reading.device?.name ?? "-") \(reading.time.timeIntervalSince1970) \(reading.value.first ?? 0)"
            }
        }
        expectEqual(found, ["alpha 3.0 3", "alpha 2.0 2", "beta 3.0 3", "beta 2.0 2"])
        let devices = try reader.performAndWait {
            try reader.fetch(Device.fetchRequest(sortedBy: [.address.descending])).map {
                ($0.address, $0.readings.count)
            }
        }
        expectEqual(devices.map(\.0), ["AA:02", "AA:01"])
        expectEqual(devices.map(\.1), [3, 3])
        let count = try reader.performAndWait { try reader.count(for: Reading.fetchRequest(limit: 4)) }
        expectEqual(count, 4)
    }

    @Test func aTypedRequestIsTheDynamicRequestItIsMadeOf() throws {
        let request = try Reading.fetchRequest(
            where: "characteristic == $c", ["c": .string("2a19")], sortedBy: [.device(.address), .time.descending],
            limit: 5, offset: 2)
        expectEqual(
            request.request,
            FetchRequest(
                entity: "Reading", predicate: try ObjectPredicate(format: "characteristic == $c"),
                arguments: ["c": .string("2a19")],
                sortDescriptors: [
                    ObjectSortDescriptor("device.address"), ObjectSortDescriptor("time", ascending: false),
                ],
                fetchLimit: 5, fetchOffset: 2))
        expectEqual(request.sortKeys, [.device(.address), .time.descending])
        expectEqual(SortKey<Device>.name.descending.ascending, .name)
        #expect(throws: PredicateSyntaxError.self) { try Device.fetchRequest(where: "name ==") }
    }

    @Test func findLooksUpTheUniqueKeyAmongSavedAndUnsavedObjects() throws {
        let fixture = try ContextFixture(.sqlite)
        _ = try fixture.seedDevices(2)  // addresses AA:d0, AA:d1
        let context = fixture.makeContext()
        try context.performAndWait {
            expectEqual(try Device.find(address: "AA:d1", in: context)?.name, "d1")
            expectNil(try Device.find(address: "AA:new", in: context))
            let inserted = context.insert(Device.self)
            inserted.address = "AA:new"
            expectEqual(try Device.find(address: "AA:new", in: context), inserted)
            context.delete(try #require(try Device.find(address: "AA:d0", in: context)))
            expectNil(try Device.find(address: "AA:d0", in: context))
        }
    }

    @Test func typedObjectsForIDsCheckTheirEntity() throws {
        let fixture = try ContextFixture(.inMemory)
        let ids = try fixture.seedDevices(1, readingsEach: 1)
        let context = fixture.makeContext()
        try context.performAndWait {
            let device = try context.existingObject(with: ids[0], as: Device.self)
            expectFalse(device.isFault)
            expectEqual(context.objects(with: ids, as: Device.self), [device])
            let reading = try #require(device.readings.first)
            #expect(
                throws: StoreError.invalidRequest(
                    field: "id", message: "\(reading.objectID) is not an object of Device")
            ) {
                try context.existingObject(with: reading.objectID, as: Device.self)
            }
            #expect(throws: StoreError.notFound(ObjectID(entity: "Device", number: 99))) {
                try context.existingObject(with: ObjectID(entity: "Device", number: 99), as: Device.self)
            }
        }
    }

    @Test func aTypedLiveQueryGivesTheObjectsOfEachUpdate() throws {
        let fixture = try StackFixture()
        let main = fixture.stack.main
        let query = try TypedLiveQuery(
            Device.fetchRequest(sortedBy: [.name, .address]), in: main, sectionedBy: .name)
        let seen = Collected<[String]>()
        let disposable = query.updates.startWithValues { update in
            seen.append(update.objects.map { "\($0.name ?? "-")@\($0.address)" })
            if let diff = update.diff { seen.append(diff.inserted.map { update.object(at: $0.path).address }) }
            seen.append(update.sections.map { "\($0.name):\($0.objects.count)" })
        }
        defer { disposable.dispose() }
        drain(main)
        let worker = fixture.stack.newWorker()
        try worker.performAndWait {
            for (name, address) in [("b", "AA:2"), ("a", "AA:1"), ("b", "AA:3")] {
                let device = worker.insert(Device.self)
                device.name = name
                device.address = address
            }
            try worker.save()
        }
        drain(main)
        drain(main)
        expectEqual(
            seen.all,
            [[], [], ["a@AA:1", "b@AA:2", "b@AA:3"], ["AA:1", "AA:2", "AA:3"], ["a:1", "b:2"]])
        #expect(throws: LiveQueryError.self) {
            try TypedLiveQuery(Device.fetchRequest(sortedBy: [.address]), in: main, sectionedBy: .name)
        }
    }

    @Test func idsFetchedInTheBackgroundBecomeTypedFaultsOnMain() throws {
        let fixture = try StackFixture()
        let ids = try fixture.seedTypedDevices(["x", "y"])
        let main = fixture.stack.main
        let fetched = try fixture.stack.fetchIDsInBackground(Device.fetchRequest(sortedBy: [.name.descending]))
            .first().get()
        expectEqual(fetched, ids.reversed())
        let names = main.performAndWait { () -> [String] in
            let devices = main.objects(with: fetched, as: Device.self)
            expectTrue(devices.allSatisfy(\.isFault))
            return devices.compactMap(\.name)
        }
        expectEqual(names, ["y", "x"])
    }

    @Test func readingARequiredAttributeThatWasNeverSetTrapsNamingTheEntityAndKey() async {
        await #expect(processExitsWith: .failure) {
            let context = ObjectContext(store: InMemoryStore(model: .deviceReadings))
            context.performAndWait {
                let reading = context.insert(Reading.self)
                _ = reading.characteristic  // required, never set
            }
        }
    }
}

extension ObjectContext {
    /// A new `Reading` with its required values; on the context's queue.
    func makeTypedReading(characteristic: String, time: Double = 0) -> Reading {
        let reading = insert(Reading.self)
        reading.characteristic = characteristic
        reading.value = Data([1])
        reading.time = Date(timeIntervalSince1970: time)
        return reading
    }
}

extension StackFixture {
    /// Saves a device per name through a worker (addresses AA:<name>) and returns their IDs, in order.
    func seedTypedDevices(_ names: [String]) throws -> [ObjectID] {
        let worker = stack.newWorker()
        return try worker.performAndWait {
            let devices = names.map { name in
                let device = worker.insert(Device.self)
                device.name = name
                device.address = "AA:\(name)"
                return device
            }
            try worker.save()
            return devices.map(\.objectID)
        }
    }
}
