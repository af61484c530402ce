"""Baseline for devicesvc's watches: bleak's start_notify on the simulated BlueZ, and a hand-written reconnect loop.

    scripts/bluez-sim --python scripts/bluezsim/bleak_watch_bench.py --use-running [--devices 4]
        [--values 1000] [--interval-ms 10] [--cycles 20] [--retry-ms 20] [--watch NAME=PID]...

1. Notifications: one BleakClient per device (the first --devices of the simulator's), start_notify on Echo Out
   with a callback, then the simulator streams --values notifications every --interval-ms on every device at once
   (StartStream: each value holds its sequence number and the simulator's CLOCK_MONOTONIC at sending). Reports
   values delivered of those sent, duplicates, and the delivery latency (the callback's time.monotonic_ns() minus the
   sending time) percentiles, with the CPU seconds of this process and each --watch'ed one.
2. Reconnect: on the first device, a hand-written loop of the kind bleak users write (a new BleakClient, connect(),
   start_notify(), wait for the disconnected callback; on an error sleep --retry-ms and try again) while the
   simulator streams every 2 ms; --cycles times the device goes out of range (SetInRange false) for 150 ms and comes
   back: the time from SetInRange(true) answering to the first value after it.

Prints one JSON line at the end (bench devicewatch reads it). Needs --use-running: the simulator at
DBUS_SYSTEM_BUS_ADDRESS, with the devices cached (--cached all).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import struct
import sys
import time
from pathlib import Path

import dbus

HERE = Path(__file__).resolve().parent
ADDRESSES = ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03", "AA:BB:CC:DD:EE:04"]
ECHO_OUT = "c0defeed-0002-4000-8000-000000000000"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict:
    if not values:
        return {}
    return {
        "mean": round(statistics.fmean(values), 3),
        "p50": round(percentile(values, 0.50), 3),
        "p90": round(percentile(values, 0.90), 3),
        "p99": round(percentile(values, 0.99), 3),
        "max": round(max(values), 3),
    }


class Control:
    """The simulator's control interface (dbus-python, blocking calls)."""

    def __init__(self, address: str) -> None:
        bus = dbus.bus.BusConnection(address)
        self.control = dbus.Interface(bus.get_object("org.contextbus.BlueZSim", "/"), "org.contextbus.BlueZSim.Control")

    def stream(self, address: str, interval_ms: int, count: int) -> None:
        self.control.StartStream(f"{address}/{ECHO_OUT}", dbus.UInt32(interval_ms), dbus.UInt32(count))

    def stop_streams(self) -> None:
        self.control.StopStreams()

    def in_range(self, address: str, in_range: bool) -> None:
        self.control.SetInRange(address, in_range)


async def notifications(control: Control, devices: list, values: int, interval_ms: int, watched: dict) -> dict:
    from bleak import BleakClient

    seen: dict[str, list[int]] = {device.address: [] for device in devices}
    latencies: list[float] = []

    def callback_for(address: str):
        def callback(_characteristic, data: bytearray) -> None:
            now = time.monotonic_ns()
            sequence, sent = struct.unpack_from("<IQ", data)
            seen[address].append(sequence)
            latencies.append((now - sent) / 1e6)

        return callback

    clients = [BleakClient(device) for device in devices]
    for client, device in zip(clients, devices):
        await client.connect()
        await client.start_notify(ECHO_OUT, callback_for(device.address))
    cpu = {name: cpu_seconds(pid) for name, pid in watched.items()}
    started = time.perf_counter()
    for device in devices:
        control.stream(device.address, interval_ms, values)
    deadline = time.monotonic() + values * interval_ms / 1000 + 10
    while sum(len(s) for s in seen.values()) < values * len(devices) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.2)  # anything doubled arrives too
    seconds = time.perf_counter() - started
    cpu = {name: round(cpu_seconds(pid) - cpu[name], 3) for name, pid in watched.items()}
    for client in clients:
        await client.disconnect()
    delivered = sum(len(set(s)) for s in seen.values())
    return {
        "devices": len(devices), "sent": values * len(devices), "delivered": delivered,
        "duplicates": sum(len(s) - len(set(s)) for s in seen.values()), "seconds": round(seconds, 3),
        "latency_ms": summary(latencies), "cpu_s": cpu,
    }


async def reconnects(control: Control, device, cycles: int, retry_ms: int) -> dict:
    from bleak import BleakClient

    state = {"values": [], "stop": False}
    lost = asyncio.Event()

    def on_value(_characteristic, data: bytearray) -> None:
        state["values"].append((time.monotonic_ns(), struct.unpack_from("<I", data)[0]))

    async def keep_watching() -> None:
        # What a bleak user writes: connect, subscribe, wait for the loss, and start over, sleeping between failures.
        while not state["stop"]:
            lost.clear()
            client = BleakClient(device, disconnected_callback=lambda _client: lost.set())
            try:
                await client.connect()
                await client.start_notify(ECHO_OUT, on_value)
                await lost.wait()
            except Exception:
                await asyncio.sleep(retry_ms / 1000)
        try:
            await client.disconnect()
        except Exception:
            pass

    task = asyncio.create_task(keep_watching())
    control.stream(device.address, 2, 10_000_000)
    while not state["values"]:
        await asyncio.sleep(0.01)
    times = []
    for _ in range(cycles):
        control.in_range(device.address, False)
        await asyncio.sleep(0.15)
        control.in_range(device.address, True)
        back = time.monotonic_ns()
        deadline = time.monotonic() + 10
        while not any(at > back for at, _ in state["values"][-50:]) and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        first = next((at for at, _ in state["values"][-50:] if at > back), None)
        if first is not None:
            times.append((first - back) / 1e6)
        await asyncio.sleep(0.1)
    control.stop_streams()
    state["stop"] = True
    lost.set()
    await asyncio.wait_for(task, 10)
    sequences = [sequence for _, sequence in state["values"]]
    return {"cycles": cycles, "measured": len(times), "duplicates": len(sequences) - len(set(sequences)),
            "ms": summary(times), "retry_ms": retry_ms}


async def run(args, watched: dict) -> dict:
    from bleak import BleakScanner

    control = Control(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    devices = []
    for address in ADDRESSES[: args.devices]:
        device = await BleakScanner.find_device_by_address(address, timeout=10)
        if device is None:
            raise SystemExit(f"bleak_watch_bench: {address} not found")
        devices.append(device)
    result = {"tool": "bleak"}
    result["notifications"] = await notifications(control, devices, args.values, args.interval_ms, watched)
    control.stop_streams()
    result["reconnect"] = await reconnects(control, devices[0], args.cycles, args.retry_ms)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=4, choices=range(1, len(ADDRESSES) + 1))
    parser.add_argument("--values", type=int, default=1000)
    parser.add_argument("--interval-ms", type=int, default=10)
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--retry-ms", type=int, default=20)
    parser.add_argument("--use-running", action="store_true", required=True)
    parser.add_argument("--watch", action="append", default=[], metavar="NAME=PID")
    args = parser.parse_args()
    watched = {"client": os.getpid()}
    for item in args.watch:
        name, _, pid = item.partition("=")
        watched[name] = int(pid)
    os.environ["PATH"] = f"{HERE / 'bin'}:{os.environ['PATH']}"  # fake bluetoothctl for bleak's version check
    result = asyncio.run(run(args, watched))
    notes = result["notifications"]
    print(f"bleak notifications: {notes['delivered']}/{notes['sent']} delivered, {notes['duplicates']} doubled, "
          f"latency ms {notes['latency_ms']}, CPU {notes['cpu_s']}")
    print(f"bleak reconnect: {result['reconnect']}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
