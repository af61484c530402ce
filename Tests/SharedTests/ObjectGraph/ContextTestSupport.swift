import Dispatch
import Foundation
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport

/// A store under test with a top-level context on it.
struct ContextFixture {
    let testStore: TestStore
    var store: any PersistentStore { testStore.store }

    init(_ factory: StoreFactory, model: Model = .deviceReadings) throws {
        testStore = try factory.make(model)
    }

    /// A new top-level context on the fixture's store.
    func makeContext(_ name: String = "ctx") -> ObjectContext {
        ObjectContext(store: store, name: name)
    }

    /// Saves `count` devices named d0, d1, … through a scratch context and returns their IDs.
    func seedDevices(_ count: Int, readingsEach: Int = 0) throws -> [ObjectID] {
        let context = makeContext("seed")
        return try context.performAndWait {
            var devices: [ManagedObject] = []
            for i in 0..<count {
                let device = context.makeDevice("d\(i)")
                for r in 0..<readingsEach {
                    context.makeReading(device: device, characteristic: "c\(r)")
                }
                devices.append(device)
            }
            try context.save()
            return devices.map(\.objectID)
        }
    }
}

extension ObjectContext {
    /// A new device with `address` and `name`; on the context's queue.
    @discardableResult
    func makeDevice(_ name: String, address: String? = nil) -> ManagedObject {
        let device = insert(entity: "Device")
        device["address", as: String.self] = address ?? "AA:\(name)"
        device["name", as: String.self] = name
        return device
    }

    /// A new reading of `device`; on the context's queue.
    @discardableResult
    func makeReading(device: ManagedObject?, characteristic: String = "2a19", time: Double = 0) -> ManagedObject {
        let reading = insert(entity: "Reading")
        reading["characteristic", as: String.self] = characteristic
        reading["value", as: Data.self] = Data([1, 2])
        reading["time", as: Date.self] = Date(timeIntervalSince1970: time)
        if let device { reading.setRelatedObject(device, forKey: "device") }
        return reading
    }
}

/// Values collected from another thread, read once the sender is done.
final class Collected<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// Waits (without sleeping) until every block already queued on `context` has run.
func drain(_ context: ObjectContext) {
    context.performAndWait {}
}

/// The queue used as "main" by `.mainQueue` contexts in tests (set once, never DispatchQueue.main,
/// which the test runner does not service).
let testMainQueue: DispatchQueue = {
    let queue = DispatchQueue(label: "test main queue")
    ObjectContext.mainQueue = queue
    return queue
}()
