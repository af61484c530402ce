"""bleak, a real BlueZ client library, works against the simulator."""

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_bleak_scans_connects_reads_writes_and_gets_notifications(sim, bleak_env):
    run = subprocess.run([sys.executable, str(HERE / "bleak_probe.py")], env=bleak_env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert "Could not determine BlueZ version" not in run.stderr
    result = json.loads(run.stdout)
    assert result["found"] == ["AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03",
                               "AA:BB:CC:DD:EE:04", "AA:BB:CC:DD:EE:05"]
    assert result["connected"] is True and result["connected_after"] is False
    assert "0000180f-0000-1000-8000-00805f9b34fb" in result["services"]
    assert result["level"] == [87]
    assert result["echoes"] == ["0102", "03"]
    calls = [(str(e[4]), str(e[6])) for e in sim.ctl("GetCallLog") if e[3] != "org.freedesktop.DBus.Properties"]
    assert ("Connect", "ok") in calls and ("Disconnect", "ok") in calls


def test_bleak_bench_runs_chains_sequentially_then_on_devices_in_parallel(sim, bleak_env, sim_env):
    run = subprocess.run([sys.executable, str(HERE.parent / "bleak_bench.py"), "--chains", "4", "--warm-up", "1",
                          "--parallel-devices", "2", "--use-running", "--watch",
                          f"simulator={sim_env['BLUEZ_SIM_PID']}"],
                         env=bleak_env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.splitlines()[-1])
    assert summary["chains"] == 4 and summary["chains_per_s"] > 0
    parallel = summary["phases"]["parallel"]
    assert parallel["devices"] == 2 and parallel["chains"] == 4
    assert set(parallel["cpu_s"]) == {"client", "simulator"}
    assert summary["phases"]["parallel_connect_locked"]["chains"] == 4
    assert sim.ctl("CountCalls", "ss", "AA:BB:CC:DD:EE:01", "Connect") == 1 + 4 + 2 + 2
    assert sim.ctl("CountCalls", "ss", "AA:BB:CC:DD:EE:02", "Connect") == 2 + 2
