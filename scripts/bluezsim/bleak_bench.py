"""Baseline for devicesvc: connect -> read 2a19 -> write -> disconnect chains with bleak against the simulated
BlueZ, first sequentially on one device, then (with --parallel-devices N) on N devices at once
(asyncio.gather over N BleakClients), once freely and once with an asyncio.Lock around connect() (one
connection set-up at a time per adapter, as devicesvc does, but bleak's connect() includes service discovery). Prints chains/s, per-chain latency and CPU seconds, and one JSON line for
scripts.

    scripts/bluez-sim --python scripts/bluezsim/bleak_bench.py [--chains 200] [--parallel-devices 4]
        [--warm-up 5] [--use-running] [--watch NAME=PID]...

Without --use-running it starts its own simulator (default timings) and stops it afterwards; with it, it uses
the simulator that DBUS_SYSTEM_BUS_ADDRESS points at. Each --watch adds a process whose CPU time (utime + stime
from /proc/PID/stat) is reported per phase, next to this process's own ("client").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ADDRESSES = ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03", "AA:BB:CC:DD:EE:04"]
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
ECHO_IN = "c0defeed-0001-4000-8000-000000000000"
TICKS = os.sysconf("SC_CLK_TCK")


def start_simulator() -> tuple[subprocess.Popen, str]:
    ready = Path(tempfile.mkdtemp(prefix="bleak-bench.")) / "ready"
    process = subprocess.Popen([str(ROOT / "scripts" / "bluez-sim"), "--ready-file", str(ready)],
                               stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("bleak_bench: the simulator did not start")
        time.sleep(0.02)
    lines = dict(line.split("=", 1) for line in ready.read_text().splitlines())
    return process, lines["DBUS_SYSTEM_BUS_ADDRESS"]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Phase:
    """Wall time and the CPU time each watched process spent during one phase."""

    def __init__(self, watched: dict[str, int]) -> None:
        self.watched = watched
        self.cpu: dict[str, float] = {}
        self.seconds = 0.0

    def __enter__(self) -> "Phase":
        self._cpu = {name: cpu_seconds(pid) for name, pid in self.watched.items()}
        self._started = time.perf_counter()
        return self

    def __exit__(self, *_) -> None:
        self.seconds = time.perf_counter() - self._started
        self.cpu = {name: round(cpu_seconds(pid) - self._cpu[name], 3) for name, pid in self.watched.items()}


async def chains_on(device, chains: int, latencies: list[float], connecting: asyncio.Lock | None = None) -> None:
    from bleak import BleakClient

    for index in range(chains):
        started = time.perf_counter()
        client = BleakClient(device)
        if connecting is None:
            await client.connect()
        else:
            async with connecting:  # what a bleak user does on an adapter that takes one connect at a time
                await client.connect()
        level = await client.read_gatt_char(BATTERY_LEVEL)
        if len(level) != 1:
            raise SystemExit(f"bleak_bench: unexpected battery level {level!r}")
        await client.write_gatt_char(ECHO_IN, bytes([index & 0xFF]), response=True)
        await client.disconnect()
        latencies.append(time.perf_counter() - started)


async def run(chains: int, parallel: int, warm_up: int, watched: dict[str, int]) -> dict:
    from bleak import BleakScanner

    devices = []
    for address in ADDRESSES[: max(1, parallel)]:
        device = await BleakScanner.find_device_by_address(address, timeout=10)
        if device is None:
            raise SystemExit(f"bleak_bench: {address} not found")
        devices.append(device)
    await chains_on(devices[0], warm_up, [])
    phases = {}
    latencies: list[float] = []
    with Phase(watched) as sequential:
        await chains_on(devices[0], chains, latencies)
    phases["sequential"] = summarize(latencies, sequential, 1)
    if parallel > 1:
        latencies = []
        each = chains // parallel
        with Phase(watched) as together:
            await asyncio.gather(*(chains_on(device, each, latencies) for device in devices))
        phases["parallel"] = summarize(latencies, together, parallel)
        latencies = []
        connecting = asyncio.Lock()
        with Phase(watched) as locked:
            await asyncio.gather(*(chains_on(device, each, latencies, connecting) for device in devices))
        phases["parallel_connect_locked"] = summarize(latencies, locked, parallel)
    return phases


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def summarize(latencies: list[float], phase: Phase, devices: int) -> dict:
    ms = [latency * 1000 for latency in latencies]
    return {
        "devices": devices,
        "chains": len(ms),
        "seconds": round(phase.seconds, 3),
        "chains_per_s": round(len(ms) / phase.seconds, 2),
        "ms": {
            "mean": round(statistics.fmean(ms), 2),
            "p50": round(percentile(ms, 0.50), 2),
            "p90": round(percentile(ms, 0.90), 2),
            "p99": round(percentile(ms, 0.99), 2),
            "max": round(max(ms), 2),
        },
        "cpu_s": phase.cpu,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=200)
    parser.add_argument("--parallel-devices", type=int, default=1, choices=range(1, len(ADDRESSES) + 1),
                        help="also run CHAINS chains spread over this many devices at once")
    parser.add_argument("--warm-up", type=int, default=5, help="chains run before measuring (as devicesvc's bench)")
    parser.add_argument("--use-running", action="store_true",
                        help="use the simulator at DBUS_SYSTEM_BUS_ADDRESS instead of starting one")
    parser.add_argument("--watch", action="append", default=[], metavar="NAME=PID",
                        help="report this process's CPU seconds per phase too")
    args = parser.parse_args()
    watched = {"client": os.getpid()}
    for item in args.watch:
        name, _, pid = item.partition("=")
        if not name or not pid.isdigit():
            parser.error(f"--watch wants NAME=PID, not {item!r}")
        watched[name] = int(pid)
    os.environ["PATH"] = f"{HERE / 'bin'}:{os.environ['PATH']}"  # fake bluetoothctl for bleak's version check
    process = None
    if not args.use_running:
        process, address = start_simulator()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
    try:
        phases = asyncio.run(run(args.chains, args.parallel_devices, args.warm_up, watched))
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=10)
    for name, phase in phases.items():
        ms = phase["ms"]
        cpu = ", ".join(f"{key} {value:.2f} s" for key, value in phase["cpu_s"].items())
        print(f"bleak {name}: {phase['chains']} chains on {phase['devices']} device(s) in {phase['seconds']} s, "
              f"{phase['chains_per_s']} chains/s; per chain ms: mean {ms['mean']}, p50 {ms['p50']}, "
              f"p90 {ms['p90']}, p99 {ms['p99']}, max {ms['max']}; CPU: {cpu}")
    summary = {"tool": "bleak", **phases["sequential"], "phases": phases}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
