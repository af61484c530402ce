"""The simulator process: a private system-like dbus-daemon, the simulated bluetoothd (dbusmock + our template)
on it, and the control interface. Runs in the foreground until SIGINT/SIGTERM, then removes everything.

    python -m bluezsim.simd [--ready-file PATH] [--log PATH] [--devices N] [--cached all|none|ADDR,...]
                            [--timing NAME=MS ...] [--powered-off]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import dbus
import dbus.bus
import dbus.mainloop.glib
import dbus.service
from dbusmock import mockobject
from gi.repository import GLib

from bluezsim import control
from bluezsim.runtime import DEFAULT_TIMINGS, RUNTIME

TEMPLATE = str(Path(__file__).with_name("template.py"))

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_type="method_return"/>
    <allow send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="signal"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


def _die_with_parent() -> None:
    """In the dbus-daemon child: get SIGTERM if the simulator dies, even by SIGKILL."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Supervisor:
    """Owns the bus daemon, the control connection and the current bluetoothd incarnation."""

    def __init__(self, address: str, parameters: dict, logfile: str | None, timing_overrides: dict) -> None:
        self.address = address
        self.parameters = parameters
        self.logfile = logfile
        self.timing_overrides = timing_overrides
        self.connection = None
        self.root = None

    @property
    def running(self) -> bool:
        """Whether a bluetoothd incarnation owns org.bluez."""
        return self.connection is not None

    def start_bluetoothd(self) -> None:
        """Connects a new bus connection, takes org.bluez and builds the object tree on it."""
        if self.running:
            return
        connection = dbus.bus.BusConnection(self.address)
        connection.request_name("org.bluez", dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
        root = mockobject.DBusMockObject(
            connection, "/", mockobject.OBJECT_MANAGER_IFACE, {}, self.logfile or os.devnull, True
        )
        root.AddTemplate(TEMPLATE, self.parameters)
        mockobject.objects["/"] = root
        self.connection, self.root = connection, root

    def stop_bluetoothd(self) -> None:
        """Tears the incarnation down and closes its connection, so org.bluez loses its owner."""
        if not self.running:
            return
        bluetoothd = RUNTIME.bluetoothd
        if bluetoothd is not None:
            bluetoothd.stop()
        RUNTIME.bluetoothd = None
        try:
            self.root.remove_from_connection()
        except Exception:
            pass
        mockobject.objects.clear()
        self.connection.close()
        self.connection, self.root = None, None


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bluez-sim", description="Simulated BlueZ on a private system bus.")
    parser.add_argument("--ready-file", help="write KEY=VALUE lines here once ready (removed on exit)")
    parser.add_argument("--log", help="dbusmock's log of calls and signals (default: none)")
    parser.add_argument("--devices", type=int, default=5, help="how many of the 5 simulated devices exist")
    parser.add_argument("--cached", default=None,
                        help="devices bluetoothd knows at start: all, none or comma-separated addresses "
                             "(default: all but AA:BB:CC:DD:EE:04 and AA:BB:CC:DD:EE:05)")
    parser.add_argument("--timing", action="append", default=[], metavar="NAME=MS",
                        help=f"override a timing ({', '.join(DEFAULT_TIMINGS)})")
    parser.add_argument("--powered-off", action="store_true", help="start with the adapter powered off")
    parser.add_argument("--one-connect-per-adapter", action="store_true",
                        help="answer InProgress to a Connect while another device on the adapter is still "
                             "setting up its link (as controllers that take one LE connection at a time do)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    overrides = {}
    for item in args.timing:
        name, _, value = item.partition("=")
        if name not in DEFAULT_TIMINGS or not value.isdigit():
            print(f"bluez-sim: bad --timing {item!r}; names: {', '.join(DEFAULT_TIMINGS)}", file=sys.stderr)
            return 2
        overrides[name] = int(value)
    RUNTIME.timings.update(overrides)
    parameters: dict = {"devices": args.devices, "powered": not args.powered_off,
                        "one_connect_per_adapter": args.one_connect_per_adapter}
    if args.cached is not None:
        parameters["cached"] = args.cached if args.cached in ("all", "none") else args.cached.split(",")

    workdir = tempfile.mkdtemp(prefix="bluez-sim.")
    socket = os.path.join(workdir, "bus")
    config = os.path.join(workdir, "bus.conf")
    Path(config).write_text(BUS_CONFIG.format(socket=socket))
    daemon = subprocess.Popen(
        ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile", "--print-address=1"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        stderr=open(os.path.join(workdir, "dbus-daemon.log"), "wb"),
        preexec_fn=_die_with_parent,
    )
    loop = GLib.MainLoop()
    exit_code = {"value": 0}
    supervisor = None
    try:
        line = daemon.stdout.readline().decode().strip()
        if not line:
            log = Path(workdir, "dbus-daemon.log").read_text(errors="replace")
            print(f"bluez-sim: dbus-daemon did not start\n{log}", file=sys.stderr)
            return 1
        address = f"unix:path={socket}"
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        control_connection = dbus.bus.BusConnection(address)
        control_connection.request_name(control.BUS_NAME, dbus.bus.NAME_FLAG_DO_NOT_QUEUE)
        supervisor = Supervisor(address, parameters, args.log, overrides)
        control_object = control.Control(control_connection, supervisor)
        supervisor.start_bluetoothd()

        def stop(*_):
            loop.quit()
            return False

        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            GLib.unix_signal_add(GLib.PRIORITY_HIGH, number, stop)

        def daemon_exited(pid, status):
            print(f"bluez-sim: dbus-daemon exited ({status})", file=sys.stderr)
            exit_code["value"] = 1
            loop.quit()

        GLib.child_watch_add(GLib.PRIORITY_DEFAULT, daemon.pid, daemon_exited)

        lines = [
            f"DBUS_SYSTEM_BUS_ADDRESS={address}",
            f"BLUEZ_SIM_PID={os.getpid()}",
            f"BLUEZ_SIM_DBUS_PID={daemon.pid}",
            f"BLUEZ_SIM_DIR={workdir}",
        ]
        if args.ready_file:
            temporary = args.ready_file + ".tmp"
            Path(temporary).write_text("\n".join(lines) + "\n")
            os.replace(temporary, args.ready_file)
        print("\n".join(lines), flush=True)
        loop.run()
        del control_object
        return exit_code["value"]
    finally:
        if supervisor is not None:
            supervisor.stop_bluetoothd()
        if daemon.poll() is None:
            daemon.terminate()
            try:
                daemon.wait(timeout=5)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        shutil.rmtree(workdir, ignore_errors=True)
        if args.ready_file:
            try:
                os.unlink(args.ready_file)
            except FileNotFoundError:
                pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
