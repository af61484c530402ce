@preconcurrency import Glibc

/// `ctxbus`, the command-line client (issue 7). Until then it only documents itself.

if CommandLine.arguments.count < 2 || CommandLine.arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(CtxbusCommand.usage)
    exit(CommandLine.arguments.count < 2 ? 64 : 0)
}
fputs("ctxbus: commands are not built yet; see --help\n", stderr)
exit(64)
