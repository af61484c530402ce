import ContextBusObjectGraph
import ContextBusSQLite
import ContextBusServer
import Foundation

/// `storesvc --model PATH --check-migration`: what opening the database with the model would do, printed one line
/// per difference (and whether it can be done), without touching the file and without the instance lock (a
/// running service may hold it: the check only reads).
enum MigrationCheck {
    /// Prints the plan on standard output (problems on standard error) and returns the exit status: 0 when the
    /// database can be opened with the model (the same model, a migration that can be done, or no database yet),
    /// 78 when it cannot.
    static func run(_ configuration: StoreServiceConfiguration) -> Int32 {
        let refused = StoreServiceError.configurationExitStatus
        let model: Model
        do {
            model = try configuration.loadModel()
        } catch {
            ServiceLog.printError("\(error)", program: "storesvc")
            return refused
        }
        let path = configuration.databasePath
        let plan: MigrationPlan?
        do {
            plan = try SQLiteStore.migrationPlan(forDatabaseAt: URL(fileURLWithPath: path), model: model)
        } catch {
            ServiceLog.printError("cannot check the database \(path): \(error)", program: "storesvc")
            return error is StoreError ? refused : 1
        }
        guard let plan else {
            let exists = FileManager.default.fileExists(atPath: path)
            print(
                exists
                    ? "\(path) was made with model \(model.versionHash): nothing to migrate"
                    : "no database at \(path) yet: storesvc would make one with model \(model.versionHash)")
            return 0
        }
        print("\(path): \(plan.summary)")
        for line in plan.lines { print(line) }
        if plan.canMigrate {
            print("storesvc would migrate it in place, after copying it to \(path).before-\(plan.stored.versionHash)")
            return 0
        }
        print("storesvc would refuse to start (exit status \(refused)) and leave the file as it is")
        return refused
    }
}
