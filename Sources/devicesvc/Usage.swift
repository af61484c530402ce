/// The `--help` text of `devicesvc`.
enum DeviceServiceCommand {
    static let usage = """
        USAGE: devicesvc [--socket PATH] [--store PATH] [--adapter NAME]

        The ContextBus device service: serialized BLE chains through BlueZ over D-Bus.
        Not yet implemented beyond --help.

        OPTIONS:
          -h, --help              Show this help.
        """
}
