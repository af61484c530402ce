import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ctxbus

struct SaveInputTests {
    func parse(_ words: [String]) throws(UsageError) -> SaveInput {
        guard case .arguments(let arguments) = try ArgumentParser(StoreSaveCommand.configuration).parse(words) else {
            throw UsageError("help")
        }
        return try SaveInput.parse(arguments)
    }

    @Test func buildsInsertsUpdatesAndDeletesFromOptionsInOrder() throws {
        let input = try parse([
            "--insert", "Device:d1", "address=AA:BB:CC:DD:EE:01", "connected=true", "--insert", "Reading",
            "device=d1", "--update", "Device/3@2", "name=lamp", "--delete", "Reading/4@1", "--delete", "Reading/5",
        ])
        guard case .form(let params) = input else {
            Issue.record("expected the option form, got \(input)")
            return
        }
        expectEqual(
            params.inserts,
            [
                .init(
                    entity: "Device", ref: "d1",
                    values: ["address": .string("AA:BB:CC:DD:EE:01"), "connected": .bool(true)]),
                .init(entity: "Reading", ref: nil, values: ["device": .string("d1")]),
            ])
        expectEqual(
            params.updates,
            [
                .init(id: ObjectID(entity: "Device", number: 3), version: 2, values: ["name": .string("lamp")])
            ])
        expectEqual(
            params.deletes,
            [
                .init(id: ObjectID(entity: "Reading", number: 4), version: 1),
                .init(id: ObjectID(entity: "Reading", number: 5), version: nil),
            ])
    }

    @Test func takesJSONInlineOrFromStandardInput() throws {
        expectEqual(try parse(["{\"insert\":[]}"]), .json(.object(["insert": .array([])])))
        try expectEqual(parse(["-"]), .standardInput)
    }

    @Test(arguments: [
        [String](),
        ["{not json"],
        ["{}", "{}"],
        ["name=x", "--insert", "Device"],
        ["--update", "Device/3", "--delete", "Device/4"],
        ["--update", "Device/x", "a=1"],
        ["--delete", "Device/3@0"],
        ["--insert", "Device:", "a=1"],
        ["--delete", "Device/1", "a=1"],
    ])
    func rejectsInputItCannotSend(words: [String]) {
        #expect(throws: UsageError.self) { try parse(words) }
    }

    @Test func rejectsJSONWithoutTheSaveShapeNamingTheField() {
        #expect(throws: UsageError.self) { try SaveInput.params(from: .object(["insert": .array([.object([:])])])) }
    }
}
