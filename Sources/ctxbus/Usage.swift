/// The `--help` text of `ctxbus`.
enum CtxbusCommand {
    static let usage = """
        USAGE: ctxbus <store|device> <command> [options]

        The ContextBus command-line client.
        Not yet implemented beyond --help.

        OPTIONS:
          -h, --help              Show this help.
        """
}
