import ContextBusWire
import Foundation

/// `ctxbus store backup FILE`.
struct StoreBackupCommand: Command {
    static let configuration = CommandConfiguration(
        name: "backup", abstract: "Copy the database to FILE while storesvc keeps serving (store.backup).",
        discussion: """
            Sends store.backup: storesvc copies a consistent snapshot of its database with SQLite's online \
            backup API, in steps, on a connection of its own, while saves go on; every save acknowledged before \
            the backup began is in the copy. The service writes FILE itself, so FILE is a path on the \
            service's side, in a directory it may write (under systemd: its state directory, \
            /var/lib/ctxbus); a relative FILE is made absolute from the current directory. An existing FILE \
            is replaced, atomically. Prints the copy's last transaction and size. Restoring: \
            docs/operations.md.
            """,
        arguments: [ArgumentSpec("file", help: "Where the copy goes, on the service's side.")],
        service: .store,
        examples: ["ctxbus store backup /var/lib/ctxbus/backups/store-$(date +%F).sqlite"])

    let path: String

    init(_ arguments: ParsedArguments) throws(UsageError) {
        guard let file = arguments.firstPositional("file"), !file.isEmpty else { throw .missingArgument("file") }
        path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
    }

    func run(in context: CommandContext) async throws {
        let result = try await context.withClient { client in
            try await client.call(StoreBackup.self, BackupParams(path: path))
        }
        let console = context.console
        if console.isJSON { return console.json(result.json) }
        console.line(
            "backed up to \(result.path): txn \(result.txn), \(result.pages) pages, \(result.bytes) bytes "
                + "in \(result.milliseconds) ms")
    }
}
