"""GATT: reads, writes (request and command), notifications and the echo service."""

import dbus
import pytest

from client import ADDR1, CHAR, DESC, DEV1, DEVICE, ECHO_IN, ECHO_OUT, full

LEVEL = DEV1 + "/service000c/char000d"
LEVEL_CCC = LEVEL + "/desc000f"


def echo_paths(sim):
    return sim.gatt_path(ADDR1, ECHO_IN), sim.gatt_path(ADDR1, ECHO_OUT)


def test_read_value_returns_the_battery_level_and_signals_value(sim):
    sim.connect()
    value = sim.call(LEVEL, CHAR, "ReadValue", "a{sv}", {})
    assert bytes(value) == bytes([87])
    assert sim.wait_for(lambda: sim.values(LEVEL) == [bytes([87])])
    assert bytes(sim.get(LEVEL, CHAR, "Value")) == bytes([87])


def test_read_value_honours_the_offset_option(sim):
    sim.connect()
    name = sim.gatt_path(ADDR1, full("2a29"))
    value = sim.call(name, CHAR, "ReadValue", "a{sv}", {"offset": dbus.UInt16(11)})
    assert bytes(value) == b"Sim"
    with pytest.raises(dbus.DBusException) as error:
        sim.call(name, CHAR, "ReadValue", "a{sv}", {"offset": dbus.UInt16(99)})
    assert error.value.get_dbus_name() == "org.bluez.Error.InvalidArguments"
    with pytest.raises(dbus.DBusException) as wrong_type:
        sim.call(name, CHAR, "ReadValue", "a{sv}", {"offset": dbus.Int32(1)})
    assert wrong_type.value.get_dbus_name() == "org.bluez.Error.InvalidArguments"


def test_start_notify_sets_notifying_and_values_change_over_time(sim):
    sim.ctl("SetTiming", "su", "notify_ms", 20)
    sim.connect()
    sim.call(LEVEL, CHAR, "StartNotify")
    assert sim.get(LEVEL, CHAR, "Notifying")
    assert sim.wait_for(lambda: len(sim.values(LEVEL)) >= 3)
    levels = [value[0] for value in sim.values(LEVEL)[:3]]
    assert levels == [86, 85, 84]
    ccc = sim.call(LEVEL_CCC, DESC, "ReadValue", "a{sv}", {})
    assert bytes(ccc) == b"\x01\x00"


def test_stop_notify_ends_the_values_and_clears_notifying(sim):
    sim.ctl("SetTiming", "su", "notify_ms", 20)
    sim.connect()
    sim.call(LEVEL, CHAR, "StartNotify")
    sim.wait_for(lambda: len(sim.values(LEVEL)) >= 1)
    sim.call(LEVEL, CHAR, "StopNotify")
    assert not sim.get(LEVEL, CHAR, "Notifying")
    sim.clear()
    sim.wait_for(lambda: False, timeout=0.1)
    assert sim.values(LEVEL) == []


def test_stop_notify_without_a_session_fails(sim):
    sim.connect()
    with pytest.raises(dbus.DBusException) as error:
        sim.call(LEVEL, CHAR, "StopNotify")
    assert error.value.get_dbus_name() == "org.bluez.Error.Failed"
    assert error.value.get_dbus_message() == "No notify session started"


def test_start_notify_on_a_characteristic_without_notify_is_not_supported(sim):
    sim.connect()
    with pytest.raises(dbus.DBusException) as error:
        sim.call(sim.gatt_path(ADDR1, full("2a29")), CHAR, "StartNotify")
    assert error.value.get_dbus_name() == "org.bluez.Error.NotSupported"


@pytest.mark.parametrize("kind", ["request", "command"])
def test_a_write_to_echo_in_comes_back_as_a_notification_on_echo_out(sim, kind):
    echo_in, echo_out = echo_paths(sim)
    sim.connect()
    sim.call(echo_out, CHAR, "StartNotify")
    sim.call(echo_in, CHAR, "WriteValue", "aya{sv}", b"hello", {"type": kind})
    assert sim.wait_for(lambda: sim.values(echo_out) == [b"hello"])
    assert bytes(sim.call(echo_out, CHAR, "ReadValue", "a{sv}", {})) == b"hello"


def test_write_without_type_uses_the_flags(sim):
    echo_in, echo_out = echo_paths(sim)
    sim.connect()
    sim.call(echo_out, CHAR, "StartNotify")
    sim.call(echo_in, CHAR, "WriteValue", "aya{sv}", b"\x01\x02", {})
    assert sim.wait_for(lambda: sim.values(echo_out) == [b"\x01\x02"])


def test_write_request_to_a_read_only_characteristic_is_not_permitted(sim):
    sim.connect()
    with pytest.raises(dbus.DBusException) as error:
        sim.call(LEVEL, CHAR, "WriteValue", "aya{sv}", b"\x01", {"type": "request"})
    assert error.value.get_dbus_name() == "org.bluez.Error.NotPermitted"
    with pytest.raises(dbus.DBusException) as unsupported:
        sim.call(LEVEL, CHAR, "WriteValue", "aya{sv}", b"\x01", {})
    assert unsupported.value.get_dbus_name() == "org.bluez.Error.NotSupported"
    with pytest.raises(dbus.DBusException) as bad_type:
        sim.call(LEVEL, CHAR, "WriteValue", "aya{sv}", b"\x01", {"type": "sideways"})
    assert bad_type.value.get_dbus_name() == "org.bluez.Error.NotSupported"


def test_writing_the_ccc_descriptor_is_not_permitted(sim):
    sim.connect()
    with pytest.raises(dbus.DBusException) as error:
        sim.call(LEVEL_CCC, DESC, "WriteValue", "aya{sv}", b"\x01\x00", {})
    assert error.value.get_dbus_name() == "org.bluez.Error.NotPermitted"


def test_a_notify_session_survives_a_reconnect_like_bluez(sim):
    sim.ctl("SetTiming", "su", "notify_ms", 20)
    sim.connect()
    sim.call(LEVEL, CHAR, "StartNotify")
    sim.call(DEV1, DEVICE, "Disconnect")
    assert not sim.get(LEVEL, CHAR, "Notifying")
    sim.connect()
    assert sim.get(LEVEL, CHAR, "Notifying")


def test_start_notify_while_disconnected_succeeds_and_enables_on_connect(sim):
    sim.call(LEVEL, CHAR, "StartNotify")
    assert not sim.get(LEVEL, CHAR, "Notifying")
    sim.connect()
    assert sim.get(LEVEL, CHAR, "Notifying")


def test_notify_sessions_are_per_client(sim, address):
    from client import Client

    other = Client(address)
    try:
        sim.connect()
        sim.call(LEVEL, CHAR, "StartNotify")
        other.call(LEVEL, CHAR, "StartNotify")
        sim.call(LEVEL, CHAR, "StopNotify")
        assert sim.get(LEVEL, CHAR, "Notifying")
        other.close()
        assert sim.wait_for(lambda: not sim.get(LEVEL, CHAR, "Notifying"))
    finally:
        other.close()


def test_control_notify_and_set_value_reach_the_client(sim):
    echo_in, echo_out = echo_paths(sim)
    sim.connect()
    assert not sim.ctl("Notify", "say", f"{ADDR1}/{ECHO_OUT}", b"early")
    sim.call(echo_out, CHAR, "StartNotify")
    assert sim.ctl("Notify", "say", f"{ADDR1}/{ECHO_OUT}", b"pushed")
    assert sim.wait_for(lambda: sim.values(echo_out) == [b"pushed"])
    sim.ctl("SetValue", "say", f"{ADDR1}/2a19", b"\x05")
    assert bytes(sim.call(LEVEL, CHAR, "ReadValue", "a{sv}", {})) == b"\x05"
