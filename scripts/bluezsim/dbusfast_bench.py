"""The floor for devicesvc and bleak: the same connect -> read 2a19 -> write -> disconnect chain as bleak_bench.py,
made with raw dbus-fast (bleak's own D-Bus library) against the simulated BlueZ: four method calls per chain on one
`dbus_fast.aio.MessageBus`, nothing else. No match rules, so no signals; the object paths come from one
`GetManagedObjects` before the chains; the simulator, like bluetoothd for LE devices, answers `Connect` only once the
services are resolved, so waiting for its reply is enough. What a library cannot do with less.

    scripts/bluez-sim --python scripts/bluezsim/dbusfast_bench.py [--chains 200] [--warm-up 5] [--use-running]
        [--watch NAME=PID]...

Prints the phase and one JSON line of bleak_bench.py's shape (`phases.sequential`) for scripts. Without
--use-running it starts its own simulator; with it, it uses the one DBUS_SYSTEM_BUS_ADDRESS points at. Each --watch
adds a process whose CPU seconds are reported next to this process's own ("client").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from bleak_bench import ADDRESSES, BATTERY_LEVEL, ECHO_IN, Phase, start_simulator, summarize

BLUEZ = "org.bluez"
DEVICE = "org.bluez.Device1"
CHARACTERISTIC = "org.bluez.GattCharacteristic1"


async def call(bus, path: str, interface: str, member: str, signature: str = "", body: list | None = None):
    from dbus_fast import Message, MessageType

    reply = await bus.call(
        Message(destination=BLUEZ, path=path, interface=interface, member=member, signature=signature,
                body=body or []))
    if reply.message_type == MessageType.ERROR:
        raise SystemExit(f"dbusfast_bench: {member} on {path}: {reply.error_name}: {reply.body}")
    return reply


async def paths(bus, address: str) -> tuple[str, str, str]:
    """The device's path and those of its battery level and Echo In characteristics, once (the simulator is run
    with --cached all: the GATT objects exist before the first connect)."""
    reply = await call(bus, "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    objects = reply.body[0]
    device = next(path for path, interfaces in objects.items()
                  if DEVICE in interfaces and interfaces[DEVICE]["Address"].value == address)

    def characteristic(uuid: str) -> str:
        return min(path for path, interfaces in objects.items()
                   if path.startswith(device + "/") and CHARACTERISTIC in interfaces
                   and interfaces[CHARACTERISTIC]["UUID"].value == uuid)

    return device, characteristic(BATTERY_LEVEL), characteristic(ECHO_IN)


async def chains_on(bus, targets: tuple[str, str, str], chains: int, latencies: list[float]) -> None:
    from dbus_fast import Variant

    device, level, echo_in = targets
    for index in range(chains):
        started = time.perf_counter()
        await call(bus, device, DEVICE, "Connect")
        reply = await call(bus, level, CHARACTERISTIC, "ReadValue", "a{sv}", [{}])
        if len(reply.body[0]) != 1:
            raise SystemExit(f"dbusfast_bench: unexpected battery level {reply.body[0]!r}")
        await call(bus, echo_in, CHARACTERISTIC, "WriteValue", "aya{sv}",
                   [bytes([index & 0xFF]), {"type": Variant("s", "request")}])
        await call(bus, device, DEVICE, "Disconnect")
        latencies.append(time.perf_counter() - started)


async def run(chains: int, warm_up: int, watched: dict[str, int]) -> dict:
    from dbus_fast import BusType
    from dbus_fast.aio import MessageBus

    bus = await MessageBus(bus_type=BusType.SYSTEM).connect()
    try:
        targets = await paths(bus, ADDRESSES[0])
        await chains_on(bus, targets, warm_up, [])
        latencies: list[float] = []
        with Phase(watched) as sequential:
            await chains_on(bus, targets, chains, latencies)
        return {"sequential": summarize(latencies, sequential, 1)}
    finally:
        bus.disconnect()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=200)
    parser.add_argument("--warm-up", type=int, default=5, help="chains run before measuring (as the others do)")
    parser.add_argument("--use-running", action="store_true",
                        help="use the simulator at DBUS_SYSTEM_BUS_ADDRESS instead of starting one")
    parser.add_argument("--watch", action="append", default=[], metavar="NAME=PID",
                        help="report this process's CPU seconds too")
    args = parser.parse_args()
    watched = {"client": os.getpid()}
    for item in args.watch:
        name, _, pid = item.partition("=")
        if not name or not pid.isdigit():
            parser.error(f"--watch wants NAME=PID, not {item!r}")
        watched[name] = int(pid)
    process = None
    if not args.use_running:
        process, address = start_simulator()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
    try:
        phases = asyncio.run(run(args.chains, args.warm_up, watched))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=10)
    phase = phases["sequential"]
    ms = phase["ms"]
    cpu = ", ".join(f"{key} {value:.2f} s" for key, value in phase["cpu_s"].items())
    print(f"dbus-fast sequential: {phase['chains']} chains on 1 device in {phase['seconds']} s, "
          f"{phase['chains_per_s']} chains/s; per chain ms: mean {ms['mean']}, p50 {ms['p50']}, p90 {ms['p90']}, "
          f"p99 {ms['p99']}, max {ms['max']}; CPU: {cpu}")
    print(json.dumps({"tool": "dbus-fast", **phase, "phases": phases}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
