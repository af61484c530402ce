import Foundation
import TestSupport
import Testing

@testable import ContextBusSupport

/// `JSONParser` and `JSONWriter` compared with Foundation's `JSONSerialization`, `JSONEncoder` and
/// `JSONDecoder` on seeded random documents. Numbers are compared exactly with `JSONDecoder` and
/// the original values, and within a relative 1e-14 with `JSONSerialization` (see `approximatelyEqual`).
struct JSONFoundationParityTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func foundationReadsWhatTheWriterWritesAsTheSameValue(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<150 {
            let value = random.document()
            let bytes = try JSONWriter().bytes(value)
            let object = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            let read = jsonValue(fromFoundation: object)
            expectTrue(
                approximatelyEqual(read, value), "Foundation read \(String(decoding: bytes, as: UTF8.self)) differently"
            )
            let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
            expectTrue(numericallyEqual(decoded, value), "JSONDecoder read \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func parserReadsWhatJSONEncoderWritesAsTheSameValue(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<150 {
            let value = random.document()
            let data = try JSONEncoder().encode(value)
            let read = try JSONParser().parse(data)
            expectTrue(
                numericallyEqual(read, value), "parser read \(String(decoding: data, as: UTF8.self)) differently")
        }
    }

    @Test(arguments: [21, 22] as [UInt64])
    func parserReadsWhatJSONSerializationWritesWithTheSameTypes(seed: UInt64) throws {
        var random = RandomJSON(seed: seed)
        for _ in 0..<150 {
            let value = random.document()
            let data = try JSONSerialization.data(withJSONObject: foundationObject(from: value), options: [])
            let mine = try JSONParser().parse(data)
            let theirs = jsonValue(fromFoundation: try JSONSerialization.jsonObject(with: data, options: []))
            expectTrue(numericallyEqual(mine, value), "\(String(decoding: data, as: UTF8.self))")
            expectTrue(approximatelyEqual(mine, theirs), "\(String(decoding: data, as: UTF8.self))")
        }
    }

    @Test func acceptsAndRejectsMutatedDocumentsLikeJSONSerialization() throws {
        var random = RandomJSON(seed: 99)
        let lenient = JSONParser(rejectsDuplicateKeys: false)
        var disagreements: [String] = []
        var bothAccepted = 0
        for _ in 0..<600 {
            var bytes = try JSONWriter().bytes(random.document(maximumDepth: 3))
            let at = Int.random(in: 0..<bytes.count, using: &random.generator)
            bytes[at] = Array(#"{}[],:"\ 0123456789.eE-+tfnu"#.utf8).randomElement(using: &random.generator)!
            let mine = try? lenient.parse(bytes)
            let theirs = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
            switch (mine, theirs) {
            case (let mine?, let theirs?):
                bothAccepted += 1
                if !approximatelyEqual(mine, jsonValue(fromFoundation: theirs)) {
                    disagreements.append("values differ: \(String(decoding: bytes, as: UTF8.self))")
                }
            case (nil, nil): break
            case (nil, _?): disagreements.append("only Foundation accepts \(String(decoding: bytes, as: UTF8.self))")
            case (_?, nil): disagreements.append("only the parser accepts \(String(decoding: bytes, as: UTF8.self))")
            }
        }
        expectEmpty(disagreements, "\(disagreements.prefix(5))")
        expectGreaterThan(bothAccepted, 50)
    }
}
