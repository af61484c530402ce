"""bluetoothd leaving the bus and coming back."""

import dbus
import pytest

from client import DEV1, DEVICE


def owner(sim, name="org.bluez"):
    try:
        return str(sim.bus.get_name_owner(name))
    except dbus.DBusException:
        return None


def test_stop_bluetoothd_releases_org_bluez_and_calls_fail_service_unknown(sim):
    before = owner(sim)
    assert before is not None
    sim.ctl("StopBluetoothd")
    assert owner(sim) is None
    assert not sim.ctl("IsBluetoothdRunning")
    with pytest.raises(dbus.DBusException) as error:
        sim.connect()
    assert error.value.get_dbus_name() == "org.freedesktop.DBus.Error.ServiceUnknown"
    assert owner(sim, "org.contextbus.BlueZSim") is not None  # the control interface stays


def test_start_bluetoothd_comes_back_under_a_new_unique_name_with_fresh_state(sim):
    first = owner(sim)
    sim.connect()
    sim.ctl("StopBluetoothd")
    sim.ctl("StartBluetoothd")
    second = owner(sim)
    assert second is not None and second != first
    assert sim.ctl("IsBluetoothdRunning")
    assert not sim.get(DEV1, DEVICE, "Connected")


def test_name_owner_changed_is_seen_when_bluetoothd_leaves_and_returns(sim):
    changes = []
    sim.bus.add_signal_receiver(lambda name, old, new: changes.append((str(old) != "", str(new) != "")),
                                signal_name="NameOwnerChanged", dbus_interface="org.freedesktop.DBus",
                                arg0="org.bluez")
    sim.ctl("RestartBluetoothd")
    assert sim.wait_for(lambda: len(changes) == 2)
    assert changes == [(True, False), (False, True)]


def test_a_hung_call_gets_an_error_when_bluetoothd_stops(sim):
    sim.ctl("HangMethod", "ssi", "*", "Connect", 1)
    sim.call_async("connect", DEV1, DEVICE, "Connect", timeout=10)
    sim.wait_for(lambda: sim.ctl("CountCalls", "ss", "*", "Connect") == 1)
    sim.ctl("StopBluetoothd")
    assert sim.wait_for(lambda: sim.replies("connect"), timeout=3)
    assert sim.replies("connect")[0][0] == "error"


def test_control_methods_that_need_bluetoothd_say_it_is_stopped(sim):
    sim.ctl("StopBluetoothd")
    with pytest.raises(dbus.DBusException) as error:
        sim.ctl("DropConnection", "su", "AA:BB:CC:DD:EE:01", 0)
    assert error.value.get_dbus_name() == "org.contextbus.BlueZSim.Error.NotRunning"
