/// The `--help` text of `storesvc`.
enum StoreServiceCommand {
    static let usage = """
        USAGE: storesvc [--socket PATH] [--database PATH] [--model PATH]

        The ContextBus store service: owns the root context, the only writer of a SQLite file.
        Not yet implemented beyond --help.

        OPTIONS:
          -h, --help              Show this help.
        """
}
