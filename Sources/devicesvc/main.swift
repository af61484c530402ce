@preconcurrency import Glibc

/// `devicesvc` runs chains of Bluetooth LE operations through BlueZ (issue 6).
/// Until the service exists it only documents itself.

if CommandLine.arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(DeviceServiceCommand.usage)
    exit(0)
}
fputs("devicesvc: the device service is not built yet; see --help\n", stderr)
exit(64)
