import Foundation
import TestSupport
import Testing

@testable import ContextBusObjectGraph
@testable import ContextBusSupport
@testable import ctxbus

/// `ctxbus store model --diff FILE` against a real storesvc: the plan from the served model to the file's, one line
/// per difference, exit status 78 when storesvc would refuse it; after the migration, `store model` says what the
/// database was migrated from.
@Suite(.serialized) struct StoreModelDiffIntegrationTests {
    private func write(_ model: Model, to path: String) throws {
        try Data(try JSONWriter(sortsKeys: true).string(model.jsonValue).utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func theDiffPrintsThePlanAgainstTheServedModelAndRefusalsExit78() async throws {
        let store = try await TestStoreService.start()
        defer { store.stop() }
        let environment = ["CTXBUS_STORE_SOCKET": store.socketPath]
        var entities = Model.deviceReadings.entities
        entities[1].attributes[4] = AttributeDescription("level", .double, optional: true, renamedFrom: "number")
        entities[0].attributes.append(AttributeDescription("firmware", .string, optional: true))
        entities[1].uniqueBy = [["time", "device"]]
        let good = try Model(entities: entities)
        let goodPath = store.directory + "/good.json"
        try write(good, to: goodPath)
        let diff = try await Ctxbus.run(["store", "model", "--diff", goodPath], environment: environment)
        expectEqual(diff.status, 0, "\(diff.errors)")
        expectEqual(
            diff.outputLines,
            [
                MigrationPlan(from: .deviceReadings, to: good).summary,
                "ok       Device.firmware: attribute added (string, optional)",
                "ok       Reading.level: attribute renamed from number",
                "ok       Reading: uniqueBy [time, device] added",
                "         (if no two live objects share its values: storesvc --check-migration reads them)",
            ])
        let json = try await Ctxbus.run(["store", "model", "--diff", goodPath, "--json"], environment: environment)
        let plan = try JSONParser().parse(json.output)
        expectEqual(plan["canMigrate"], .bool(true))
        expectEqual(plan["from"], .string(Model.deviceReadings.versionHash))
        expectEqual(plan["steps"]?.arrayValue?.first?["key"], .string("firmware"))

        entities[1].attributes[1].type = .string
        let badPath = store.directory + "/bad.json"
        try write(try Model(entities: entities), to: badPath)
        let refused = try await Ctxbus.run(["store", "model", "--diff", badPath], environment: environment)
        expectEqual(refused.status, 78)
        expectTrue(
            refused.outputLines.contains(
                "refused  Reading.value: cannot be migrated: type changed from binary to string (only int to double can be migrated)"
            ),
            "\(refused.output)")
        expectTrue(refused.errors.contains("storesvc would refuse to start"), "\(refused.errors)")

        let missing = try await Ctxbus.run(
            ["store", "model", "--diff", store.directory + "/none.json"], environment: environment)
        expectEqual(missing.status, 64)

        // Migrated: the model says what it was migrated from.
        await store.stopKeepingFiles()
        let migrated = try await TestStoreService.start(in: store.directory, arguments: ["--model", goodPath])
        defer { migrated.stop() }
        let shown = try await Ctxbus.run(["store", "model"], environment: environment)
        expectEqual(shown.outputLines.first, "model version \(good.versionHash)")
        expectEqual(
            shown.outputLines.dropFirst().first, "migrated from \(Model.deviceReadings.versionHash) (oldest first)")
        let same = try await Ctxbus.run(["store", "model", "--diff", goodPath], environment: environment)
        expectEqual(same.outputLines, ["model \(good.versionHash): no differences"])
    }
}
