"""The call log: what was called, with what, by whom, and how it ended."""

import time

import dbus
import pytest

from client import ADDR1, CHAR, DEV1, DEVICE, ECHO_IN

LEVEL = DEV1 + "/service000c/char000d"


def log(sim):
    return [tuple(entry) for entry in sim.ctl("GetCallLog")]


def test_every_call_is_logged_with_time_sender_path_interface_method_args_and_outcome(sim):
    before = time.time()
    sim.connect()
    sim.call(sim.gatt_path(ADDR1, ECHO_IN), CHAR, "WriteValue", "aya{sv}", b"\x01\xff", {"type": "command"})
    with pytest.raises(dbus.DBusException):
        sim.call(LEVEL, CHAR, "WriteValue", "aya{sv}", b"\x01", {"type": "request"})
    entries = [e for e in log(sim) if e[3] != "org.freedesktop.DBus.Properties"]
    assert [(e[2], e[3], e[4], e[5], e[6]) for e in entries] == [
        (DEV1, DEVICE, "Connect", "", "ok"),
        ("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", "", "ok"),
        (sim.gatt_path(ADDR1, ECHO_IN), CHAR, "WriteValue", "0x01ff, {type: command}", "ok"),
        (LEVEL, CHAR, "WriteValue", "0x01, {type: request}", "org.bluez.Error.NotPermitted"),
    ]
    assert all(e[1] == sim.unique_name for e in entries)
    assert all(before <= e[0] <= time.time() for e in entries)


def test_count_calls_proves_what_was_not_called(sim):
    sim.connect()
    assert sim.ctl("CountCalls", "ss", ADDR1, "Connect") == 1
    assert sim.ctl("CountCalls", "ss", ADDR1, "Disconnect") == 0
    assert sim.ctl("CountCalls", "ss", "AA:BB:CC:DD:EE:02", "*") == 0


def test_clear_call_log_empties_it(sim):
    sim.connect()
    assert log(sim)
    sim.ctl("ClearCallLog")
    assert log(sim) == []
    sim.call(DEV1, DEVICE, "Disconnect")
    assert [e[4] for e in log(sim)] == ["Disconnect"]


def test_reset_empties_the_log_and_restores_the_start_state(sim):
    sim.connect()
    sim.ctl("FailMethod", "ssssi", "*", "*", "org.bluez.Error.Failed", "x", 0)
    sim.ctl("SetTiming", "su", "connect_ms", 999)
    sim.ctl("Reset")
    assert log(sim) == []
    assert list(sim.ctl("ListFaults")) == []
    assert sim.ctl("GetTimings")["connect_ms"] == 10
    assert not sim.get(DEV1, DEVICE, "Connected")


def test_a_dictionary_argument_is_logged_by_key_whatever_order_it_was_sent_in(sim):
    filter_ = dbus.Dictionary(
        [("UUIDs", dbus.Array(["fcd2"], signature="s")), ("RSSI", dbus.Int16(-90)), ("Transport", "le")],
        signature="sv",
    )
    sim.call("/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter", "a{sv}", filter_)
    entry = [e for e in log(sim) if e[4] == "SetDiscoveryFilter"][0]
    assert entry[5] == "{RSSI: -90, Transport: le, UUIDs: [fcd2]}"
