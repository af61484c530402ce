@preconcurrency import Glibc

/// `storesvc` owns the root context and serves the store over the bus (issue 5).
/// Until the service exists it only documents itself.

if CommandLine.arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(StoreServiceCommand.usage)
    exit(0)
}
fputs("storesvc: the store service is not built yet; see --help\n", stderr)
exit(64)
