"""Fault injection through the control interface: fail, hang, delay, link drops, unresolved services."""

import time

import dbus
import pytest

from client import ADDR1, CHAR, DEV1, DEVICE, full

DEV2 = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_02"
LEVEL = DEV1 + "/service000c/char000d"


def read_level(sim):
    return bytes(sim.call(LEVEL, CHAR, "ReadValue", "a{sv}", {}))


def test_fail_method_fails_count_times_with_the_given_error_then_works(sim):
    sim.ctl("FailMethod", "ssssi", ADDR1, "Connect", "org.bluez.Error.Failed", "le-connection-abort-by-local", 2)
    for _ in range(2):
        with pytest.raises(dbus.DBusException) as error:
            sim.connect()
        assert error.value.get_dbus_name() == "org.bluez.Error.Failed"
        assert error.value.get_dbus_message() == "le-connection-abort-by-local"
    sim.connect()
    assert sim.get(DEV1, DEVICE, "Connected")


def test_fail_method_until_cleared_and_only_on_its_target(sim):
    fault = sim.ctl("FailMethod", "ssssi", ADDR1, "Connect", "org.bluez.Error.NotReady", "Resource Not Ready", 0)
    for _ in range(3):
        with pytest.raises(dbus.DBusException):
            sim.connect()
    sim.connect(DEV2)  # another device is not affected
    assert sim.ctl("ClearFault", "u", fault)
    assert not sim.ctl("ClearFault", "u", fault)
    sim.connect()


def test_fail_method_on_one_characteristic_uuid(sim):
    sim.ctl("FailMethod", "ssssi", f"{ADDR1}/2a19", "ReadValue", "org.bluez.Error.NotPermitted", "Read not permitted", 0)
    sim.connect()
    with pytest.raises(dbus.DBusException) as error:
        read_level(sim)
    assert error.value.get_dbus_name() == "org.bluez.Error.NotPermitted"
    temperature = sim.gatt_path(ADDR1, full("2a6e"))
    assert bytes(sim.call(temperature, CHAR, "ReadValue", "a{sv}", {})) == (2150).to_bytes(2, "little")


def test_fail_method_refuses_a_malformed_error_name_and_target(sim):
    with pytest.raises(dbus.DBusException) as name:
        sim.ctl("FailMethod", "ssssi", ADDR1, "Connect", "not an error", "x", 1)
    assert name.value.get_dbus_name() == "org.contextbus.BlueZSim.Error.InvalidArgs"
    with pytest.raises(dbus.DBusException) as target:
        sim.ctl("FailMethod", "ssssi", "kitchen", "Connect", "org.bluez.Error.Failed", "x", 1)
    assert target.value.get_dbus_name() == "org.contextbus.BlueZSim.Error.InvalidArgs"


def test_hang_method_never_replies_and_the_log_says_so(sim):
    sim.ctl("HangMethod", "ssi", ADDR1, "Connect", 1)
    with pytest.raises(dbus.DBusException) as error:
        sim.call(DEV1, DEVICE, "Connect", timeout=0.5)
    assert error.value.get_dbus_name() == "org.freedesktop.DBus.Error.NoReply"
    assert not sim.get(DEV1, DEVICE, "Connected")
    log = sim.ctl("GetCallLog")
    assert [(str(e[4]), str(e[6])) for e in log if e[4] == "Connect"] == [("Connect", "hung")]
    sim.connect()  # count was 1


def test_delay_method_delays_the_reply(sim):
    sim.connect()
    sim.ctl("DelayMethod", "ssui", ADDR1, "ReadValue", 1000, 1)
    started = time.monotonic()
    assert read_level(sim) == bytes([87])
    assert time.monotonic() - started >= 1.0
    started = time.monotonic()
    read_level(sim)
    assert time.monotonic() - started < 1.0  # the count was 1


def test_drop_connection_now_signals_link_loss(sim):
    sim.connect()
    sim.clear()
    assert sim.ctl("DropConnection", "su", ADDR1, 0)
    assert sim.wait_for(lambda: len(sim.changes(DEV1, DEVICE)) == 2)
    assert [dict(c[2]) for c in sim.changes(DEV1, DEVICE)] == [{"ServicesResolved": False}, {"Connected": False}]
    assert not sim.ctl("DropConnection", "su", ADDR1, 0)  # nothing left to drop
    with pytest.raises(dbus.DBusException) as error:
        read_level(sim)
    assert error.value.get_dbus_message() == "Not connected"


def test_drop_connection_after_a_delay(sim):
    sim.connect()
    sim.ctl("DropConnection", "su", ADDR1, 100)
    assert sim.get(DEV1, DEVICE, "Connected")
    assert sim.wait_for(lambda: not sim.get(DEV1, DEVICE, "Connected"), timeout=2)


def test_drop_after_connect_hits_the_next_connection(sim):
    # 400 ms: long enough that a loaded machine still sees the link up before the drop.
    sim.ctl("DropAfterConnect", "sui", ADDR1, 400, 1)
    sim.connect()
    assert sim.get(DEV1, DEVICE, "ServicesResolved")
    assert sim.wait_for(lambda: not sim.get(DEV1, DEVICE, "Connected"), timeout=5)
    sim.connect()
    sim.wait_for(lambda: False, timeout=0.6)  # past the 400 ms a second drop would take
    assert sim.get(DEV1, DEVICE, "Connected")  # count was 1


def test_drop_during_notify_drops_after_n_notifications(sim):
    sim.ctl("SetTiming", "su", "notify_ms", 20)
    sim.ctl("DropDuringNotify", "sui", f"{ADDR1}/2a19", 3, 1)
    sim.connect()
    sim.call(LEVEL, CHAR, "StartNotify")
    assert sim.wait_for(lambda: not sim.get(DEV1, DEVICE, "Connected"), timeout=2)
    sim.wait_for(lambda: False, timeout=0.1)
    assert len(sim.values(LEVEL)) == 3
    assert not sim.get(LEVEL, CHAR, "Notifying")


def test_never_resolve_services_connects_without_services_resolved(sim):
    sim.ctl("NeverResolveServices", "si", ADDR1, 1)
    sim.connect()
    sim.wait_for(lambda: False, timeout=0.1)
    assert sim.get(DEV1, DEVICE, "Connected")
    assert not sim.get(DEV1, DEVICE, "ServicesResolved")
    assert not any("ServicesResolved" in c[2] for c in sim.changes(DEV1, DEVICE))
    sim.call(DEV1, DEVICE, "Disconnect")
    sim.connect()
    assert sim.get(DEV1, DEVICE, "ServicesResolved")


def test_list_faults_and_reset_faults(sim):
    first = sim.ctl("FailMethod", "ssssi", ADDR1, "Connect", "org.bluez.Error.Failed", "boom", 2)
    second = sim.ctl("HangMethod", "ssi", "*", "ReadValue", 0)
    listed = [tuple(f) for f in sim.ctl("ListFaults")]
    assert listed == [(first, "fail", ADDR1, "Connect", 2, "org.bluez.Error.Failed: boom"),
                      (second, "hang", "*", "ReadValue", -1, "")]
    sim.ctl("ResetFaults")
    assert list(sim.ctl("ListFaults")) == []
    sim.connect()
    assert read_level(sim) == bytes([87])


def test_faults_apply_to_property_and_object_manager_calls_too(sim):
    sim.ctl("FailMethod", "ssssi", "/", "GetManagedObjects", "org.freedesktop.DBus.Error.Failed", "nope", 1)
    with pytest.raises(dbus.DBusException) as error:
        sim.managed()
    assert error.value.get_dbus_name() == "org.freedesktop.DBus.Error.Failed"
    assert DEV1 in sim.managed()


def test_drop_during_notify_counts_only_the_characteristics_it_names(sim):
    from client import ECHO_OUT

    sim.ctl("DropDuringNotify", "sui", f"{ADDR1}/2a19", 1, 1)
    sim.connect()
    echo_out = sim.gatt_path(ADDR1, ECHO_OUT)
    sim.call(echo_out, CHAR, "StartNotify")
    for value in (b"\x01", b"\x02", b"\x03"):
        assert sim.ctl("Notify", "say", f"{ADDR1}/{ECHO_OUT}", value)
    sim.wait_for(lambda: len(sim.values(echo_out)) == 3)
    assert sim.get(DEV1, DEVICE, "Connected")
    sim.call(LEVEL, CHAR, "StartNotify")
    assert sim.ctl("Notify", "say", f"{ADDR1}/2a19", b"\x50")
    assert sim.wait_for(lambda: not sim.get(DEV1, DEVICE, "Connected"))


def test_link_loss_while_pairing_fails_the_pair(sim):
    sim.ctl("SetTiming", "su", "pair_ms", 2000)
    sim.call_async("pair", DEV1, DEVICE, "Pair")
    assert sim.wait_for(lambda: sim.changes(DEV1, DEVICE, "ServicesResolved"))  # connected, now pairing
    assert sim.ctl("DropConnection", "su", ADDR1, 0)
    assert sim.wait_for(lambda: sim.replies("pair"))
    assert sim.replies("pair")[0][2].get_dbus_name() == "org.bluez.Error.AuthenticationFailed"
    assert not sim.get(DEV1, DEVICE, "Paired")
