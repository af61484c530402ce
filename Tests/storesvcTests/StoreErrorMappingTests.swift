import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusWire
@testable import storesvc

struct StoreErrorMappingTests {
    private func map(_ error: any Error) -> RPCError {
        StoreErrorMapping.rpcError(for: error, log: .silent)
    }

    @Test func conflictsCarryCurrentVersionsAndValues() throws {
        let id = ObjectID(entity: "Device", number: 3)
        let gone = ObjectID(entity: "Device", number: 4)
        let error = map(
            StoreError.conflict([
                .init(id: id, version: 1, currentVersion: 2, currentValues: ["name": .string("x")]),
                .init(id: gone, version: 1, currentVersion: nil, currentValues: [:]),
            ]))
        expectEqual(error.code, .conflict)
        let conflicts = try #require(error.data?["conflicts"]?.arrayValue).map { try SaveConflict(json: $0) }
        expectEqual(
            conflicts,
            [
                SaveConflict(id: id, version: 1, currentVersion: 2, currentValues: ["name": .string("x")]),
                SaveConflict(id: gone, version: 1, currentVersion: nil, currentValues: nil),
            ])
    }

    @Test func validationFailuresNameInsertsByRefAndSavedObjectsByID() throws {
        let error = map(
            StoreError.validation([
                .init(id: ObjectID(entity: "Reading", temporaryReference: "r1"), key: "time", reason: "is required"),
                .init(id: ObjectID(entity: "Device", number: 2), key: "readings", reason: "deny"),
            ]))
        expectEqual(error.code, .validationFailed)
        let issues = try #require(error.data?["errors"]?.arrayValue).map { try ValidationIssue(json: $0) }
        expectEqual(
            issues,
            [
                ValidationIssue(ref: "r1", key: "time", reason: "is required"),
                ValidationIssue(id: ObjectID(entity: "Device", number: 2), key: "readings", reason: "deny"),
            ])
    }

    @Test func eachStoreErrorHasItsCode() {
        let id = ObjectID(entity: "Device", number: 9)
        expectEqual(map(StoreError.notFound(id)).code, .notFound)
        expectEqual(map(StoreError.notFound(id)).data?["id"], .string("Device/9"))
        expectEqual(map(StoreError.invalidRequest(field: "sort[0].key", message: "no")).field, "sort[0].key")
        expectEqual(map(StoreError.historyUnavailable(since: 3, oldest: 10)).code, .gone)
        expectEqual(map(StoreError.historyUnavailable(since: 3, oldest: 10)).data?["oldest"], .int(10))
        expectEqual(map(StoreError.unavailable("closed")).code, .unavailable)
    }

    @Test func unknownErrorsAreInternalWithoutDetail() {
        struct Secret: Error, CustomStringConvertible { var description: String { "/secret/path line 12" } }
        let error = map(Secret())
        expectEqual(error.code, .internalError)
        expectFalse(error.message.contains("secret"))
        expectNil(error.data)
    }
}
