"""Starts one simulator for the test session; each test gets it Reset (fresh bluetoothd, no faults, empty
call log, default timings) and a fresh client connection."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from client import Client, pump  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
SIM = ROOT / "scripts" / "bluez-sim"
FAKE_BIN = ROOT / "scripts" / "bluezsim" / "bin"


def read_ready(path: Path) -> dict:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def start_sim(ready: Path, *extra: str) -> tuple[subprocess.Popen, dict]:
    """Starts scripts/bluez-sim in the foreground with a ready file and waits for it."""
    process = subprocess.Popen([str(SIM), "--ready-file", str(ready), *extra], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not ready.exists():
        if process.poll() is not None:
            raise RuntimeError(f"bluez-sim exited: {process.stderr.read().decode()}")
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("bluez-sim not ready after 60 s")
        time.sleep(0.02)
    return process, read_ready(ready)


def stop_sim(process: subprocess.Popen) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
    return err.decode()


@pytest.fixture(scope="session")
def sim_env(tmp_path_factory):
    ready = tmp_path_factory.mktemp("sim") / "ready"
    process, env = start_sim(ready)
    yield env
    stderr = stop_sim(process)
    assert "Traceback" not in stderr, stderr


@pytest.fixture
def sim(sim_env):
    """A client on a freshly reset simulator."""
    control = Client(sim_env["DBUS_SYSTEM_BUS_ADDRESS"])
    control.ctl("Reset")
    control.close()
    client = Client(sim_env["DBUS_SYSTEM_BUS_ADDRESS"])
    pump()
    client.events.clear()
    yield client
    client.close()


@pytest.fixture
def address(sim_env) -> str:
    return sim_env["DBUS_SYSTEM_BUS_ADDRESS"]


@pytest.fixture
def bleak_env(sim_env) -> dict:
    """Environment for a bleak process against the simulator (fake bluetoothctl reporting 5.66)."""
    env = dict(os.environ)
    env["DBUS_SYSTEM_BUS_ADDRESS"] = sim_env["DBUS_SYSTEM_BUS_ADDRESS"]
    env["PATH"] = f"{FAKE_BIN}:{env['PATH']}"
    return env
