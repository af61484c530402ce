"""Device1: Connect / Disconnect / Pair and the PropertiesChanged signals clients wait for."""

import dbus
import pytest

from client import ADAPTER, CHAR, DEV1, DEVICE, HCI0, PROPS, full

DEV2 = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_02"
LEVEL = DEV1 + "/service000c/char000d"


def device_changes(sim, path=DEV1):
    return [(name, bool(value)) for _, _, changed, _ in sim.changes(path, DEVICE)
            for name, value in changed.items() if name in ("Connected", "ServicesResolved", "Paired")]


def test_connect_signals_connected_then_services_resolved_and_only_then_replies(sim):
    sim.call_async("connect", DEV1, DEVICE, "Connect")
    assert sim.wait_for(lambda: sim.replies("connect"))
    order = [(e[3], dict(e[4][1])) if e[0] == "signal" else ("reply",) for e in sim.events
             if e[0] == "reply" or (e[0] == "signal" and e[1] == DEV1)]
    assert order == [
        ("PropertiesChanged", {"Connected": True}),
        ("PropertiesChanged", {"ServicesResolved": True}),
        ("reply",),
    ]
    assert sim.get(DEV1, DEVICE, "Connected") and sim.get(DEV1, DEVICE, "ServicesResolved")


def test_connect_makes_mtu_appear_on_characteristics(sim):
    sim.connect()
    assert sim.get(LEVEL, CHAR, "MTU") == 247


def test_connect_when_connected_succeeds_without_signals(sim):
    sim.connect()
    sim.clear()
    sim.connect()
    sim.wait_for(lambda: False, timeout=0.05)
    assert device_changes(sim) == []


def test_second_connect_while_connecting_is_in_progress(sim):
    sim.ctl("SetTiming", "su", "connect_ms", 1000)
    sim.call_async("first", DEV1, DEVICE, "Connect")
    sim.wait_for(lambda: False, timeout=0.05)
    with pytest.raises(dbus.DBusException) as error:
        sim.connect()
    assert error.value.get_dbus_name() == "org.bluez.Error.InProgress"
    assert sim.wait_for(lambda: sim.replies("first"))
    assert sim.replies("first")[0][0] == "reply"


def test_disconnect_signals_services_resolved_false_then_connected_false(sim):
    sim.connect()
    sim.clear()
    sim.call(DEV1, DEVICE, "Disconnect")
    sim.wait_for(lambda: len(device_changes(sim)) == 2)
    assert device_changes(sim) == [("ServicesResolved", False), ("Connected", False)]


def test_disconnect_when_not_connected_succeeds(sim):
    sim.call(DEV1, DEVICE, "Disconnect")
    assert not sim.get(DEV1, DEVICE, "Connected")


def test_disconnect_cancels_a_pending_connect(sim):
    sim.ctl("SetTiming", "su", "connect_ms", 1000)
    sim.call_async("connect", DEV1, DEVICE, "Connect")
    sim.wait_for(lambda: False, timeout=0.05)
    sim.call(DEV1, DEVICE, "Disconnect")
    assert sim.wait_for(lambda: sim.replies("connect"))
    outcome = sim.replies("connect")[0]
    assert outcome[0] == "error" and outcome[2].get_dbus_name() == "org.bluez.Error.Failed"
    assert not sim.get(DEV1, DEVICE, "Connected")


@pytest.mark.parametrize("method, options", [("ReadValue", ({},)), ("WriteValue", (b"\x01", {}))])
def test_gatt_calls_on_a_disconnected_device_fail_not_connected(sim, method, options):
    signature = "a{sv}" if method == "ReadValue" else "aya{sv}"
    with pytest.raises(dbus.DBusException) as error:
        sim.call(LEVEL, CHAR, method, signature, *options)
    assert error.value.get_dbus_name() == "org.bluez.Error.Failed"
    assert error.value.get_dbus_message() == "Not connected"


def test_pair_connects_then_sets_paired_and_a_second_pair_already_exists(sim):
    sim.call(DEV1, DEVICE, "Pair")
    assert sim.get(DEV1, DEVICE, "Paired") and sim.get(DEV1, DEVICE, "Connected")
    assert sim.wait_for(lambda: ("Paired", True) in device_changes(sim))
    assert device_changes(sim).index(("Connected", True)) < device_changes(sim).index(("Paired", True))
    with pytest.raises(dbus.DBusException) as error:
        sim.call(DEV1, DEVICE, "Pair")
    assert error.value.get_dbus_name() == "org.bluez.Error.AlreadyExists"


def test_cancel_pairing_fails_the_pending_pair(sim):
    sim.ctl("SetTiming", "su", "pair_ms", 2000)
    sim.call_async("pair", DEV1, DEVICE, "Pair")
    sim.wait_for(lambda: ("Connected", True) in device_changes(sim))
    sim.call(DEV1, DEVICE, "CancelPairing")
    assert sim.wait_for(lambda: sim.replies("pair"))
    assert sim.replies("pair")[0][2].get_dbus_name() == "org.bluez.Error.AuthenticationCanceled"
    assert not sim.get(DEV1, DEVICE, "Paired")


def test_connect_with_the_adapter_powered_off_is_not_ready(sim):
    sim.call(HCI0, PROPS, "Set", "ssv", ADAPTER, "Powered", dbus.Boolean(False, variant_level=1))
    with pytest.raises(dbus.DBusException) as error:
        sim.connect()
    assert error.value.get_dbus_name() == "org.bluez.Error.NotReady"


def test_powering_off_drops_connections(sim):
    sim.connect()
    sim.ctl("SetPowered", "b", False)
    assert not sim.get(DEV1, DEVICE, "Connected")
    assert sim.wait_for(lambda: ("Connected", False) in device_changes(sim))


def test_devices_connect_independently(sim):
    sim.connect(DEV1)
    sim.connect(DEV2)
    sim.call(DEV1, DEVICE, "Disconnect")
    assert not sim.get(DEV1, DEVICE, "Connected")
    assert sim.get(DEV2, DEVICE, "Connected")


def test_connect_delay_is_configurable(sim):
    import time

    sim.ctl("SetTiming", "su", "connect_ms", 150)
    started = time.monotonic()
    sim.connect()
    assert time.monotonic() - started >= 0.15


def test_uuid_list_names_every_service(sim):
    uuids = [str(u) for u in sim.get(DEV1, DEVICE, "UUIDs")]
    assert full("180f") in uuids and full("181a") in uuids
