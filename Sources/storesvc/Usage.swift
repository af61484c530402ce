import ContextBusServer

/// The `--help` text of `storesvc`.
enum StoreServiceCommand {
    static let usage = """
        USAGE: storesvc [options]

        The ContextBus store service: owns the root context, the only writer of a SQLite file,
        and serves it over a Unix socket (store.* methods of the ContextBus protocol, version 1).

        OPTIONS:
          --socket PATH        The Unix socket to listen on.
                               Default: $CTXBUS_RUNTIME_DIR/store.sock; CTXBUS_RUNTIME_DIR defaults to
                               $XDG_RUNTIME_DIR/ctxbus, else ./run. The directory is created with mode 0700.
          --database PATH      The SQLite database (created if missing; WAL mode).
                               Default: $CTXBUS_DATA_DIR/store.sqlite; CTXBUS_DATA_DIR defaults to
                               $XDG_DATA_HOME/ctxbus, else $HOME/.local/share/ctxbus, else ./data.
                               One storesvc per database: PATH.lock is held while the service runs.
          --model PATH         A JSON model shaped like store.model's result. Default: the built-in
                               Device/Reading model. A database made with another model is migrated in
                               place (after a copy to DATABASE.before-<old version hash>) when every
                               difference can be; else the service exits with status 78, naming them.
          --check-migration    Print what starting with --model would do to --database, one line per
                               difference and whether it can be done, and exit: 0 if it can start, 78 if
                               not. The file is not touched.
          --max-frame N        Largest frame accepted, in bytes (default 16777216).
          --max-in-flight N    Requests in flight per connection before 429 (default 1024).
          --max-outbound N     Outbound queue bound per connection, in bytes (default 8388608); a
                               connection that overflows it gets bus.overflow and is dropped.
          --socket-mode MODE   Mode of the socket file, octal (default 0660).
          --allow-uid UID      Also allow peers with this uid (repeatable). The service's own uid and
                               root are always allowed.
          --allow-gid GID      Also allow peers with this primary gid (repeatable).
          --history N          Transactions kept in the history for store.history and subscribe's
                               since (default 100000).
          --page-size N        Page size of a database file the service creates: a power of two from
                               512 to 65536 (default 4096, SQLite's). An existing file keeps its own.
                               2048 makes durable saves' commits fewer bytes (docs/operations.md).
          --log-level LEVEL    error, warning, info (default) or debug; logs go to standard error.
          --retain RULE        Entity:dateKey:age (repeatable): delete the objects of Entity whose date
                               attribute dateKey is older than now - age (30d, 12h, 90m, 45s), at start
                               and every --retain-interval, as one batch authored "retention".
          --retain-interval T  How often the --retain rules run (default 60s).
        \(OperationsOptions.usage)
          -h, --help           Show this help.

        SIGNALS:
          SIGTERM, SIGINT      Stop accepting, answer every save in flight, close the store, exit 0.

        SYSTEMD:
          With $NOTIFY_SOCKET (Type=notify) it sends READY=1 once listening, STATUS= lines and STOPPING=1;
          with $WATCHDOG_USEC (WatchdogSec=), WATCHDOG=1 from its event loops while they all turn.

        EXIT STATUS:
          0 after a clean stop; 64 for a bad command line (a --retain rule the model cannot serve
          included); 78 when the model is invalid or the database cannot be migrated to it; 1 when
          the service cannot start otherwise (the database is in use by another storesvc, the socket
          is live, the backup before a migration cannot be written).
        """
}
