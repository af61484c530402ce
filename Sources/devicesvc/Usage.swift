import ContextBusServer

/// The `--help` text of `devicesvc`.
enum DeviceServiceCommand {
    static let usage = """
        USAGE: devicesvc [--socket PATH] [--store PATH] [--adapter NAME] [--max-concurrent N]
                         [--serialize device|global] [--retry N] [--log-level LEVEL] [other options]

        The ContextBus device service: chains of Bluetooth LE operations (connect, read, write, notify,
        wait, disconnect) run through BlueZ over D-Bus, one chain at a time per device. Clients speak the
        ContextBus wire protocol (device.adapters, device.list, device.scan, device.run, device.cancel,
        device.subscribe, device.watch, device.unwatch, device.discover, device.undiscover,
        device.services, device.stats) on a Unix socket. SIGTERM or SIGINT cancels the running chains
        (each still disconnects), then the service exits with status 0.

        OPTIONS:
          --socket PATH           Where to listen (default $CTXBUS_RUNTIME_DIR/device.sock; CTXBUS_RUNTIME_DIR
                                  defaults to $XDG_RUNTIME_DIR/ctxbus, else ./run).
          --store PATH            The store service's socket, used by chains with "record": true
                                  (default $CTXBUS_RUNTIME_DIR/store.sock).
          --bus ADDRESS           The system bus (default $DBUS_SYSTEM_BUS_ADDRESS, else
                                  unix:path=/run/dbus/system_bus_socket).
          --adapter NAME          The Bluetooth adapter chains use (default hci0).
          --max-concurrent N      Chains on different devices running at once (default 4).
          --serialize MODE        device: one chain at a time per device (default); global: one chain at a
                                  time overall.
          --concurrent-connects N Link set-ups at once on the adapter (default 1: BlueZ and most
                                  controllers set up one LE connection at a time and answer InProgress to
                                  another; raise it for adapters that take more).
          --retry N               Retries of transient failures (InProgress, le-connection-abort-by-local,
                                  services not resolved) within a step (default 3).
          --retry-delay-ms MS     The first retry's delay; it doubles for each further retry, up to 2 s
                                  (default 100).
          --step-timeout-ms MS    A step's timeout when it names none (default 10000).
          --chain-timeout-ms MS   A chain's timeout when it names none, counted from its turn (default 120000).
          --resolve-timeout-ms MS How long a connection may take to resolve its services before it counts as
                                  failed and is retried (default 5000).
          --watch ADDRESS=UUID[,UUID…]
                                  Keep the device connected with notifications on for these characteristics
                                  as long as the service runs, reconnecting after every loss, and record
                                  every value into the store (repeatable).
          --decode UUID=FORMAT[@OFFSET][*FACTOR][:UNIT]
                                  Decode this characteristic's values into number/unit (repeatable; FORMAT is
                                  uint8, sint8, uint16, sint16, uint24, sint24, uint32, sint32 or float32,
                                  little-endian), e.g. --decode c0defeed-0002-4000-8000-000000000000=uint16*0.1:V.
                                  Battery 2a19, temperature 2a6e, humidity 2a6f and heart rate 2a37 are known.
          --log-level LEVEL       error, warning, info or debug (default info).
        \(ServerAccessOptions.usage)
        \(OperationsOptions.usage)
          -h, --help              Show this help.

        SYSTEMD:
          With $NOTIFY_SOCKET (Type=notify) it sends READY=1 once listening, STATUS= lines and STOPPING=1;
          with $WATCHDOG_USEC (WatchdogSec=), WATCHDOG=1 from its event loops while they all turn. It takes a
          listening socket from systemd (LISTEN_FDS, devicesvc.socket) instead of binding --socket.
        """
}
