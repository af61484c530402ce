"""bluez-sim-ctl: the simulator's control interface from a shell.

The bus is taken from --address, else from --ready-file, else from DBUS_SYSTEM_BUS_ADDRESS.

    bluez-sim-ctl fail TARGET METHOD ERROR_NAME MESSAGE [--count N]
    bluez-sim-ctl hang TARGET METHOD [--count N]
    bluez-sim-ctl delay TARGET METHOD MS [--count N]
    bluez-sim-ctl never-resolve TARGET [--count N]
    bluez-sim-ctl drop TARGET [--after MS]
    bluez-sim-ctl drop-after-connect TARGET MS [--count N]
    bluez-sim-ctl drop-during-notify TARGET NOTIFICATIONS [--count N]
    bluez-sim-ctl faults | clear-fault ID | reset-faults
    bluez-sim-ctl log [--clear] | clear-log | count TARGET METHOD
    bluez-sim-ctl stop-bluetoothd | start-bluetoothd | restart-bluetoothd | status
    bluez-sim-ctl timing [NAME MS] | power on|off | advertising ADDRESS on|off
    bluez-sim-ctl set-value ADDRESS/UUID HEX | notify ADDRESS/UUID HEX | reset
    bluez-sim-ctl drop-randomly TARGET MEAN_MS [--count N] | in-range ADDRESS on|off
    bluez-sim-ctl manufacturer-data ADDRESS COMPANY_HEX HEX | service-data ADDRESS UUID HEX
    bluez-sim-ctl notify-many ADDRESS/UUID HEX COUNT | stream ADDRESS/UUID INTERVAL_MS COUNT | stop-streams

--count 0 (the default for fail/hang/delay) means until cleared.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import dbus

NAME = "org.contextbus.BlueZSim"
INTERFACE = "org.contextbus.BlueZSim.Control"


def _address(args) -> str:
    if args.address:
        return args.address
    if args.ready_file:
        for line in open(args.ready_file, encoding="utf-8"):
            if line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
                return line.split("=", 1)[1].strip()
    address = os.environ.get("DBUS_SYSTEM_BUS_ADDRESS")
    if not address:
        raise SystemExit("bluez-sim-ctl: no bus: give --address, --ready-file or DBUS_SYSTEM_BUS_ADDRESS")
    return address


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bluez-sim-ctl", description="Control the simulated BlueZ.",
                                     epilog=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--address", help="the simulator's bus address")
    parser.add_argument("--ready-file", help="the simulator's ready file")
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name, *positionals, count=None):
        sub = commands.add_parser(name)
        for positional in positionals:
            sub.add_argument(positional)
        if count is not None:
            sub.add_argument("--count", type=int, default=count)
        return sub

    command("fail", "target", "method", "error_name", "message", count=0)
    command("hang", "target", "method", count=0)
    command("delay", "target", "method", "ms", count=0)
    command("never-resolve", "target", count=1)
    command("drop", "target").add_argument("--after", type=int, default=0, metavar="MS")
    command("drop-after-connect", "target", "ms", count=1)
    command("drop-during-notify", "target", "notifications", count=1)
    command("faults")
    command("clear-fault", "id")
    command("reset-faults")
    command("log").add_argument("--clear", action="store_true", help="clear the log after printing it")
    command("clear-log")
    command("count", "target", "method")
    command("stop-bluetoothd")
    command("start-bluetoothd")
    command("restart-bluetoothd")
    command("status")
    timing = command("timing")
    timing.add_argument("name", nargs="?")
    timing.add_argument("ms", nargs="?", type=int)
    command("power", "state")
    command("advertising", "address", "state")
    command("set-value", "target", "hex")
    command("notify", "target", "hex")
    command("reset")
    command("drop-randomly", "target", "ms", count=0)
    command("in-range", "address", "state")
    command("manufacturer-data", "address", "company", "hex")
    command("service-data", "address", "uuid", "hex")
    command("notify-many", "target", "hex", "count")
    command("stream", "target", "interval_ms", "count")
    command("stop-streams")
    return parser


def _on(state: str) -> bool:
    if state not in ("on", "off"):
        raise SystemExit(f"bluez-sim-ctl: expected on or off, not {state!r}")
    return state == "on"


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    bus = dbus.bus.BusConnection(_address(args))
    control = dbus.Interface(bus.get_object(NAME, "/"), INTERFACE)
    c = args.command
    if c == "fail":
        print(control.FailMethod(args.target, args.method, args.error_name, args.message, args.count))
    elif c == "hang":
        print(control.HangMethod(args.target, args.method, args.count))
    elif c == "delay":
        print(control.DelayMethod(args.target, args.method, dbus.UInt32(int(args.ms)), args.count))
    elif c == "never-resolve":
        print(control.NeverResolveServices(args.target, args.count))
    elif c == "drop":
        print("dropped" if control.DropConnection(args.target, dbus.UInt32(args.after)) else "not connected")
    elif c == "drop-after-connect":
        print(control.DropAfterConnect(args.target, dbus.UInt32(int(args.ms)), args.count))
    elif c == "drop-during-notify":
        print(control.DropDuringNotify(args.target, dbus.UInt32(int(args.notifications)), args.count))
    elif c == "faults":
        for fault_id, kind, target, method, remaining, detail in control.ListFaults():
            left = "until cleared" if remaining < 0 else f"{remaining} left"
            print(f"{fault_id}\t{kind}\t{target}\t{method or '-'}\t{left}\t{detail}")
    elif c == "clear-fault":
        print("cleared" if control.ClearFault(dbus.UInt32(int(args.id))) else "no such fault")
    elif c == "reset-faults":
        control.ResetFaults()
    elif c == "log":
        for when, sender, path, interface, method, call_args, outcome in control.GetCallLog():
            stamp = time.strftime("%H:%M:%S", time.localtime(when)) + f".{int(when * 1000) % 1000:03d}"
            print(f"{stamp} {sender} {path} {interface}.{method}({call_args}) -> {outcome}")
        if args.clear:
            control.ClearCallLog()
    elif c == "clear-log":
        control.ClearCallLog()
    elif c == "count":
        print(control.CountCalls(args.target, args.method))
    elif c == "stop-bluetoothd":
        control.StopBluetoothd()
    elif c == "start-bluetoothd":
        control.StartBluetoothd()
    elif c == "restart-bluetoothd":
        control.RestartBluetoothd()
    elif c == "status":
        print("bluetoothd running" if control.IsBluetoothdRunning() else "bluetoothd stopped")
        print(f"{len(control.ListFaults())} faults, {len(control.GetCallLog())} calls logged")
    elif c == "timing":
        if args.name is not None:
            if args.ms is None:
                raise SystemExit("bluez-sim-ctl: timing NAME MS")
            control.SetTiming(args.name, dbus.UInt32(args.ms))
        for name, ms in sorted(control.GetTimings().items()):
            print(f"{name}\t{ms}")
    elif c == "power":
        control.SetPowered(_on(args.state))
    elif c == "advertising":
        control.SetAdvertising(args.address, _on(args.state))
    elif c == "set-value":
        control.SetValue(args.target, dbus.ByteArray(bytes.fromhex(args.hex)))
    elif c == "notify":
        print("delivered" if control.Notify(args.target, dbus.ByteArray(bytes.fromhex(args.hex))) else "not notifying")
    elif c == "reset":
        control.Reset()
    elif c == "drop-randomly":
        print(control.DropRandomly(args.target, dbus.UInt32(int(args.ms)), args.count))
    elif c == "in-range":
        control.SetInRange(args.address, _on(args.state))
    elif c == "manufacturer-data":
        control.SetManufacturerData(args.address, dbus.UInt16(int(args.company, 16)),
                                    dbus.ByteArray(bytes.fromhex(args.hex)))
    elif c == "service-data":
        control.SetServiceData(args.address, args.uuid, dbus.ByteArray(bytes.fromhex(args.hex)))
    elif c == "notify-many":
        print(control.NotifyMany(args.target, dbus.ByteArray(bytes.fromhex(args.hex)), dbus.UInt32(int(args.count))))
    elif c == "stream":
        control.StartStream(args.target, dbus.UInt32(int(args.interval_ms)), dbus.UInt32(int(args.count)))
    elif c == "stop-streams":
        control.StopStreams()
    return 0


def main() -> int:
    try:
        return run(sys.argv[1:])
    except dbus.DBusException as error:
        print(f"bluez-sim-ctl: {error.get_dbus_name()}: {error.get_dbus_message()}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
