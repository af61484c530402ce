import ContextBus
import ContextBusClient
import Foundation

/// Pattern 4, fetching IDs in a worker and materialising them on main.
///
/// The readings devicesvc (another process) recorded for the chains of pattern 5 are found by a fetch of IDs only
/// (`resultType: .ids`) on a fresh worker, off main; `deliver(on: stack.main.scheduler)` brings the IDs to main's
/// queue, where `objects(with:as:)` turns them into `Reading`s: faults, whose values load from the root (and
/// storesvc) when first touched.
struct BackgroundFetchPattern {
    let stack: ContextStack

    func run(recordedSince since: Date) throws {
        let main = stack.main
        let request = try Reading.fetchRequest(
            where: "time >= $since AND chain != nil", ["since": .date(since)], sortedBy: [.time, .characteristic])
        let summary = stack.fetchIDsInBackground(request)  // on a new worker's queue
            .deliver(on: main.scheduler)
            .map { ids -> String in  // on main's queue
                let readings = main.objects(with: ids, as: Reading.self)
                let faults = readings.filter(\.isFault).count
                let devices = Set(readings.compactMap { $0.device?.address })  // touching them fires the faults
                let decoded = readings.filter { $0.number != nil }.count
                return "\(ids.count) reading IDs fetched on a worker; on main \(faults) of them were faults until "
                    + "touched; they come from \(devices.count) devices, \(decoded) with a decoded number"
            }
            .first()
        switch summary {
        case .success(let line): say("patterns: ids: " + line)
        case .failure(let error): throw DemoFailure(description: "background fetch: \(error)")
        }
    }
}
