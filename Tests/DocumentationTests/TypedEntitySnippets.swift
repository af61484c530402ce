import ContextBus
import Foundation

// The Swift samples of README.md and docs/from-core-data.md ("Typed entities"), compiled: each documentation block
// marked `<!-- compiled in Tests/DocumentationTests/TypedEntitySnippets.swift -->` appears below (DocumentationSnippetTests
// checks it, and runs it).

enum TypedEntitySnippets {
    /// docs/from-core-data.md and README.md: find or insert a device, add a reading, save, fetch the latest.
    static func findInsertSaveFetch(in context: ObjectContext) throws -> [Reading] {
        let device = try Device.find(address: "AA:BB:CC:DD:EE:01", in: context) ?? context.insert(Device.self)
        device.address = "AA:BB:CC:DD:EE:01"
        device.name = "thermo"
        let reading = context.insert(Reading.self)
        reading.characteristic = "2a19"
        reading.value = Data([87])
        reading.time = Date()
        reading.device = device  // device.readings now holds it
        try context.save()
        let recent = try context.fetch(Reading.fetchRequest(sortedBy: [.time.descending], limit: 10))
        return recent
    }
}
