import ContextBusObjectGraph
import ContextBusSupport
import Foundation

/// The every-shape model (`EveryShape.ctxmodel.json`: every attribute type, required and optional; one-to-one,
/// one-to-many, many-to-many and self relationships; each delete rule; single and compound unique keys) and a graph of
/// its objects, built and described through the generated types (`EveryShape.swift`), for the round trips through
/// each store.
public enum EveryShapeFixture {
    /// The model file.
    public static let modelURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("EveryShape.ctxmodel.json")

    /// The model, read from the file.
    public static func model() throws -> Model {
        try Model(contentsOf: modelURL)
    }

    /// The token of the sample with every optional set.
    public static let fullToken = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!

    /// Inserts (on the context's queue) a folder holding two samples, one with every optional value set and one
    /// with none, the first the parent of the second, with a badge, and two tags on the first and one on the second.
    /// Returns the samples, full first.
    @discardableResult
    public static func insertGraph(in context: ObjectContext) -> [Sample] {
        let folder = context.insert(Folder.self)
        folder.name = "inbox"
        let full = context.insert(Sample.self)
        full.text = "full"
        full.maybeText = "maybe"
        full.count = 42
        full.maybeCount = -7
        full.ratio = 0.5
        full.maybeRatio = 1e-3
        full.flag = true
        full.maybeFlag = false
        full.moment = Date(timeIntervalSince1970: 1_700_000_000.25)
        full.maybeMoment = Date(timeIntervalSince1970: -86_400)
        full.bytes = Data([0, 1, 255])
        full.maybeBytes = Data()
        full.token = fullToken
        full.maybeToken = UUID(uuidString: "00000000-0000-4000-8000-000000000001")
        full.document = .object(["a": .array([.int(1), .string("x"), .null]), "b": .bool(true)])
        full.maybeDocument = .double(2.5)
        full.default = "keyword"
        let empty = context.insert(Sample.self)
        empty.text = "empty"
        empty.ratio = 0
        empty.moment = Date(timeIntervalSince1970: 0)
        empty.bytes = Data([9])
        empty.token = UUID(uuidString: "00000000-0000-4000-8000-000000000002")!
        empty.document = .array([])
        let badge = context.insert(Badge.self)
        badge.label = "gold"
        full.badge = badge
        folder.addToSamples(full)
        empty.folder = folder
        empty.parent = full
        for name in ["red", "blue"] {
            let tag = context.insert(Tag.self)
            tag.name = name
            full.addToTags(tag)
            if name == "blue" { tag.addToSamples(empty) }
        }
        return [full, empty]
    }

    /// Every value of `sample` and of the objects it points at, one line each (on the context's queue): equal
    /// descriptions mean equal graphs.
    public static func describe(_ sample: Sample) -> [String] {
        func text(_ value: (some Any)?) -> String { value.map { "\($0)" } ?? "nil" }
        // JSON with its keys sorted: a dictionary's order differs from one instance to another.
        func json(_ value: JSONValue) -> String { (try? JSONWriter(sortsKeys: true).string(value)) ?? "\(value)" }
        return [
            "text \(sample.text) / \(text(sample.maybeText))",
            "count \(sample.count) / \(text(sample.maybeCount))",
            "ratio \(sample.ratio) / \(text(sample.maybeRatio))",
            "flag \(sample.flag) / \(text(sample.maybeFlag))",
            "moment \(sample.moment.timeIntervalSince1970) / \(text(sample.maybeMoment?.timeIntervalSince1970))",
            "bytes \(Array(sample.bytes)) / \(text(sample.maybeBytes.map(Array.init)))",
            "token \(sample.token) / \(text(sample.maybeToken))",
            "document \(json(sample.document)) / \(text(sample.maybeDocument.map(json)))",
            "default \(text(sample.default))",
            "badge \(text(sample.badge?.label)) back \(text(sample.badge?.sample?.text))",
            "folder \(text(sample.folder?.name)) holds \(sample.folder?.samples.map(\.text).sorted() ?? [])",
            "tags \(sample.tags.map(\.name).sorted()) back \(sample.tags.map { $0.samples.count }.sorted())",
            "parent \(text(sample.parent?.text)) children \(sample.children.map(\.text))",
        ]
    }
}
