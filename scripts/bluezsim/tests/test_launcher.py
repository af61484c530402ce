"""scripts/bluez-sim and scripts/bluez-sim-ctl as processes: start, readiness, options, clean-up."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dbus
import pytest

from client import ADAPTER, DEVICE, HCI0, Client
from conftest import ROOT, SIM, start_sim, stop_sim

CTL = ROOT / "scripts" / "bluez-sim-ctl"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_background_mode_prints_the_bus_and_pids_and_sigterm_removes_everything():
    run = subprocess.run([str(SIM), "--background"], capture_output=True, text=True, timeout=90)
    assert run.returncode == 0, run.stderr
    env = dict(line.split("=", 1) for line in run.stdout.splitlines())
    assert env["DBUS_SYSTEM_BUS_ADDRESS"] == f"unix:path={env['BLUEZ_SIM_DIR']}/bus"
    sim_pid, daemon_pid = int(env["BLUEZ_SIM_PID"]), int(env["BLUEZ_SIM_DBUS_PID"])
    try:
        assert alive(sim_pid) and alive(daemon_pid)
        client = Client(env["DBUS_SYSTEM_BUS_ADDRESS"])
        assert client.get(HCI0, ADAPTER, "Powered")
        client.close()
    finally:
        os.kill(sim_pid, signal.SIGTERM)
    assert wait_gone(sim_pid) and wait_gone(daemon_pid)
    assert not Path(env["BLUEZ_SIM_DIR"]).exists()


def test_dbus_daemon_goes_down_even_when_the_simulator_is_killed(tmp_path):
    process, env = start_sim(tmp_path / "ready")
    process.kill()
    process.wait()
    try:
        assert wait_gone(int(env["BLUEZ_SIM_DBUS_PID"]))
    finally:
        subprocess.run(["rm", "-rf", env["BLUEZ_SIM_DIR"]], check=False)


def test_options_choose_devices_cache_and_power(tmp_path):
    process, env = start_sim(tmp_path / "ready", "--devices", "2", "--cached", "all", "--powered-off",
                             "--timing", "connect_ms=1")
    try:
        client = Client(env["DBUS_SYSTEM_BUS_ADDRESS"])
        devices = [p for p, i in client.managed().items() if DEVICE in i]
        assert len(devices) == 2
        assert not client.get(HCI0, ADAPTER, "Powered")
        assert client.ctl("GetTimings")["connect_ms"] == 1
        client.close()
    finally:
        assert "Traceback" not in stop_sim(process)
    assert not (tmp_path / "ready").exists()


def test_one_connect_per_adapter_refuses_a_second_link_set_up_until_the_first_link_is_up(tmp_path):
    process, env = start_sim(tmp_path / "ready", "--one-connect-per-adapter", "--timing", "connect_ms=300",
                             "--timing", "resolve_ms=300")
    dev1, dev2 = HCI0 + "/dev_AA_BB_CC_DD_EE_01", HCI0 + "/dev_AA_BB_CC_DD_EE_02"
    try:
        client = Client(env["DBUS_SYSTEM_BUS_ADDRESS"])
        client.call_async("first", dev1, DEVICE, "Connect")
        client.wait_for(lambda: False, timeout=0.05)
        with pytest.raises(dbus.DBusException) as error:
            client.call(dev2, DEVICE, "Connect")
        assert error.value.get_dbus_name() == "org.bluez.Error.InProgress"
        # Once the first link is up (its services still resolving), the second device may connect.
        assert client.wait_for(lambda: client.get(dev1, DEVICE, "Connected"))
        assert not client.get(dev1, DEVICE, "ServicesResolved")
        client.call(dev2, DEVICE, "Connect")
        assert client.get(dev2, DEVICE, "ServicesResolved")
        client.close()
    finally:
        assert "Traceback" not in stop_sim(process)


def test_a_bad_option_is_refused(tmp_path):
    run = subprocess.run([str(SIM), "--timing", "warp=9"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "bad --timing" in run.stderr


def test_ctl_sets_lists_and_clears_faults_and_shows_the_log(sim, sim_env):
    base = [str(CTL), "--address", sim_env["DBUS_SYSTEM_BUS_ADDRESS"]]

    def ctl(*args):
        run = subprocess.run(base + list(args), capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        return run.stdout

    fault_id = ctl("fail", "AA:BB:CC:DD:EE:01", "Connect", "org.bluez.Error.Failed", "boom", "--count", "1").strip()
    assert "fail\tAA:BB:CC:DD:EE:01\tConnect\t1 left\torg.bluez.Error.Failed: boom" in ctl("faults")
    with pytest.raises(Exception):
        sim.connect()
    assert "org.bluez.Device1.Connect() -> org.bluez.Error.Failed" in ctl("log")
    assert ctl("count", "AA:BB:CC:DD:EE:01", "Connect").strip() == "1"
    assert "\t0 left\t" in ctl("faults")  # used up faults stay listed until cleared
    assert ctl("clear-fault", fault_id).strip() == "cleared"
    assert ctl("clear-fault", fault_id).strip() == "no such fault"
    bad = subprocess.run(base + ["fail", "x", "y", "not-an-error", "m"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1 and "InvalidArgs" in bad.stderr


def test_the_template_also_runs_under_plain_dbusmock(sim, sim_env):
    sim.ctl("StopBluetoothd")
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=sim_env["DBUS_SYSTEM_BUS_ADDRESS"])
    mock = subprocess.Popen([sys.executable, "-m", "dbusmock", "--system", "-t",
                             str(ROOT / "scripts" / "bluezsim" / "template.py")], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert sim.wait_for(lambda: sim.bus.name_has_owner("org.bluez"), timeout=30)
        sim.connect()
        assert sim.get("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01", DEVICE, "ServicesResolved")
    finally:
        mock.terminate()
        _, err = mock.communicate(timeout=10)
    assert "Traceback" not in err.decode()
