extension CommandLineTool {
    /// `ctxbus --help`.
    static var rootHelp: String {
        let formatter = HelpFormatter()
        let subcommands =
            (groups.map { formatter.entry($0.name, $0.abstract) }
            + commands.map { formatter.entry($0.configuration.name, $0.configuration.abstract) })
            .joined(separator: "\n")
        let statuses = ExitStatus.allCases.map { formatter.entry(String($0.rawValue), $0.meaning) }
            .joined(separator: "\n")
        return """
            OVERVIEW: ctxbus, the command-line client of ContextBus: query and change the store service
            (storesvc), watch its changes, and run Bluetooth LE chains on the device service (devicesvc).

            USAGE: ctxbus <store|device|fleet|model> <subcommand> [<arguments>] [<options>]
                   ctxbus <ping|metrics> [store|device|fleet] [<options>]

            OPTIONS:
            \(formatter.entry(OptionSpec.help.label, OptionSpec.help.help))

            SUBCOMMANDS:
            \(subcommands)

              See 'ctxbus <store|device|fleet|model> --help', 'ctxbus <group> <subcommand> --help' and
              'ctxbus <ping|metrics> --help'.

            COMMON OPTIONS (every subcommand):
            \(formatter.entry("--json", "Print JSON instead of tables: one compact JSON value per line (streams: one per event)."))
            \(formatter.entry("--socket <path>", "The service's socket; see ENVIRONMENT for the default."))

            ENVIRONMENT:
            \(formatter.entry("CTXBUS_STORE_SOCKET", "storesvc's socket when --socket is not given."))
            \(formatter.entry("CTXBUS_DEVICE_SOCKET", "devicesvc's socket when --socket is not given."))
            \(formatter.entry("CTXBUS_FLEET_SOCKET", "fleetsvc's socket when --socket is not given."))
            \(formatter.entry("CTXBUS_RUNTIME_DIR", "Otherwise the sockets are $CTXBUS_RUNTIME_DIR/store.sock and device.sock, as the services default to; CTXBUS_RUNTIME_DIR defaults to $XDG_RUNTIME_DIR/ctxbus, else ./run."))

            EXIT STATUS:
            \(statuses)
              128+N                   interrupted by signal N (a watch exits 0 instead)

            See docs/cli.md for the whole reference.
            """
    }
}
