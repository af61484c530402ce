import ContextBus
import Foundation

// Uses the types the ContextBusEntities plugin generated from Garden.ctxmodel.json (Bed, Plant, and an entity named
// Data, which shadows Foundation's: the generated code qualifies Foundation.Data) against a SQLiteStore, then reads
// them back through a second store on the same file. Prints what it read; scripts/plugin-check checks the lines.
guard let modelURL = Bundle.module.url(forResource: "Garden.ctxmodel", withExtension: "json") else {
    fatalError("garden: the model is not among the target's resources")
}
let model = try Model(contentsOf: modelURL)
let directory = FileManager.default.temporaryDirectory.appendingPathComponent("garden-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let file = directory.appendingPathComponent("garden.sqlite")

do {
    let store = try SQLiteStore(url: file, model: model)
    defer { store.close() }
    let context = ObjectContext(store: store)
    try context.performAndWait {
        let bed = context.insert(Bed.self)
        bed.name = "north"
        for (species, height) in [("tomato", 1.5), ("basil", nil)] {
            let plant = context.insert(Plant.self)
            plant.species = species
            plant.height = height
            plant.planted = Date(timeIntervalSince1970: 86_400)
            plant.bed = bed
        }
        let data = context.insert(Data.self)
        data.payload = Foundation.Data([1, 2, 3])
        try context.save()
    }
}

let store = try SQLiteStore(url: file, model: model)
defer { store.close() }
let context = ObjectContext(store: store)
try context.performAndWait {
    guard let bed = try Bed.find(name: "north", in: context) else { fatalError("garden: no bed north") }
    print("garden: bed \(bed.name) sunny \(bed.sunny) plants \(bed.plants.count)")
    for plant in try context.fetch(Plant.fetchRequest(sortedBy: [.species])) {
        print("garden: plant \(plant.species) \(plant.height.map { "\($0)" } ?? "-") in \(plant.bed?.name ?? "-")")
    }
    let payloads = try context.fetch(Data.fetchRequest()).map { Array($0.payload) }
    print("garden: data \(payloads)")
}
