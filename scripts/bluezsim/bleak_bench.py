"""Baseline for devicesvc: sequential connect -> read 2a19 -> write -> disconnect chains with bleak against the
simulated BlueZ. Prints chains/s and per-chain latency (and one JSON line for scripts).

    scripts/bluez-sim --python scripts/bluezsim/bleak_bench.py [--chains 200] [--use-running]

Without --use-running it starts its own simulator (default timings) and stops it afterwards; with it, it uses
the simulator that DBUS_SYSTEM_BUS_ADDRESS points at.
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
ADDRESS = "AA:BB:CC:DD:EE:01"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
ECHO_IN = "c0defeed-0001-4000-8000-000000000000"


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


async def run(chains: int) -> list[float]:
    from bleak import BleakClient, BleakScanner

    device = await BleakScanner.find_device_by_address(ADDRESS, timeout=10)
    if device is None:
        raise SystemExit(f"bleak_bench: {ADDRESS} not found")
    latencies = []
    for index in range(chains):
        started = time.perf_counter()
        client = BleakClient(device)
        await client.connect()
        level = await client.read_gatt_char(BATTERY_LEVEL)
        if len(level) != 1:
            raise SystemExit(f"bleak_bench: unexpected battery level {level!r}")
        await client.write_gatt_char(ECHO_IN, bytes([index & 0xFF]), response=True)
        await client.disconnect()
        latencies.append(time.perf_counter() - started)
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chains", type=int, default=200)
    parser.add_argument("--use-running", action="store_true",
                        help="use the simulator at DBUS_SYSTEM_BUS_ADDRESS instead of starting one")
    args = parser.parse_args()
    os.environ["PATH"] = f"{HERE / 'bin'}:{os.environ['PATH']}"  # fake bluetoothctl for bleak's version check
    process = None
    if not args.use_running:
        process, address = start_simulator()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = address
    try:
        started = time.perf_counter()
        latencies = asyncio.run(run(args.chains))
        elapsed = time.perf_counter() - started
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=10)
    ms = [latency * 1000 for latency in latencies]
    summary = {
        "tool": "bleak",
        "chains": len(ms),
        "seconds": round(elapsed, 3),
        "chains_per_s": round(len(ms) / elapsed, 2),
        "ms": {
            "mean": round(statistics.fmean(ms), 2),
            "p50": round(percentile(ms, 0.50), 2),
            "p90": round(percentile(ms, 0.90), 2),
            "p99": round(percentile(ms, 0.99), 2),
            "max": round(max(ms), 2),
        },
    }
    print(f"bleak: {summary['chains']} chains (connect, read 2a19, write, disconnect) in {summary['seconds']} s")
    print(f"bleak: {summary['chains_per_s']} chains/s; per chain ms: mean {summary['ms']['mean']}, "
          f"p50 {summary['ms']['p50']}, p90 {summary['ms']['p90']}, p99 {summary['ms']['p99']}, "
          f"max {summary['ms']['max']}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
