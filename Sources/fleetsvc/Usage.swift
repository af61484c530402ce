import ContextBusServer

/// `fleetsvc --help`.
enum FleetServiceCommand {
    static let usage = """
        usage: fleetsvc --gateway NAME [--store SOCKET] [--nats URL] [--fleet NAME] [--creds FILE] [--tls-ca FILE]
                        [--replicas N] [--device SOCKET] [--socket PATH] [--log-level LEVEL]
                        [--log-format text|json] [--metrics-file PATH] [--metrics-interval SECONDS]

        Shares this gateway's committed data with the other gateways of a fleet through NATS JetStream, and
        applies theirs to this gateway's store (docs/fleet.md).

          --gateway NAME      This gateway's name in the fleet (letters, digits, '-', '_'); required.
          --store SOCKET      storesvc's socket (default $CTXBUS_RUNTIME_DIR/store.sock; CTXBUS_RUNTIME_DIR
                              defaults to $XDG_RUNTIME_DIR/ctxbus, else ./run).
          --nats URL          The NATS server (default $CTXBUS_NATS_URL, else nats://127.0.0.1:4222); tls://
                              for TLS.
          --fleet NAME        The fleet (default "default"): stream CTXBUS_<NAME>, subjects ctxbus.<NAME>.….
          --creds FILE        NATS user credentials (a .creds file).
          --tls-ca FILE       CA certificates to verify the NATS server with (turns TLS on).
          --replicas N        Replicas of the stream when fleetsvc creates it (default 1; 3 on a cluster).
          --device SOCKET     devicesvc's socket: run the commands sent to this gateway (fleet run).
          --socket PATH       Where fleet.status and fleet.run are served (default
                              $CTXBUS_RUNTIME_DIR/fleet.sock).
          --log-level LEVEL   error, warning, info (default) or debug.
        \(OperationsOptions.usage)
          --help              This text.

        With $NOTIFY_SOCKET (systemd's Type=notify) it sends READY=1 once fleet.status is served, STATUS= lines
        and STOPPING=1; with $WATCHDOG_USEC, WATCHDOG=1 from its server's event loops while they turn.

        Exit status: 0 after SIGTERM/SIGINT, 64 for a bad command line, 1 when it cannot start.
        """
}
