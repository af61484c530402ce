"""Adapter1 discovery: sessions per client, filters, devices appearing, RSSI updates, RemoveDevice."""

import dbus
import pytest

from client import ADAPTER, DEV1, DEVICE, HCI0, full

DEV4 = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_04"


def found_paths(sim):
    added = {str(e[4][0]) for e in sim.signals("InterfacesAdded") if DEVICE in e[4][1]}
    updated = {path for path, _, changed, _ in sim.changes(interface=DEVICE, name="RSSI") if "RSSI" in changed}
    return added | updated


def test_discovery_adds_the_uncached_device_with_rssi_and_updates_cached_ones(sim):
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.get(HCI0, ADAPTER, "Discovering")
    assert sim.wait_for(lambda: len(found_paths(sim)) == 5)
    added = [e for e in sim.signals("InterfacesAdded") if str(e[4][0]) == DEV4]
    assert len(added) == 1
    properties = added[0][4][1][DEVICE]
    assert properties["Address"] == "AA:BB:CC:DD:EE:04" and properties["Name"] == "Tag-4"
    assert isinstance(properties["RSSI"], dbus.Int16) and properties["RSSI"] == -83
    assert sim.get(DEV1, DEVICE, "RSSI") == -52


def test_rssi_keeps_updating_while_discovering(sim):
    sim.ctl("SetTiming", "su", "rssi_ms", 30)
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: len(sim.changes(DEV1, DEVICE, "RSSI")) >= 3)


def test_stop_discovery_ends_discovering_and_invalidates_rssi(sim):
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    sim.wait_for(lambda: len(found_paths(sim)) == 5)
    sim.call(HCI0, ADAPTER, "StopDiscovery")
    assert not sim.get(HCI0, ADAPTER, "Discovering")
    assert sim.wait_for(lambda: any("RSSI" in inv for _, _, _, inv in sim.changes(DEV1, DEVICE)))
    assert "RSSI" not in sim.managed()[DEV1][DEVICE]


def test_rssi_filter_leaves_out_weak_devices(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)  # every advertisement at once, in device order
    sim.call(HCI0, ADAPTER, "SetDiscoveryFilter", "a{sv}", {"RSSI": dbus.Int16(-65), "Transport": "le"})
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    expected = {DEV1, "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_02"}
    assert sim.wait_for(lambda: found_paths(sim) >= expected)
    sim.wait_for(lambda: False, timeout=0.1)
    assert found_paths(sim) == expected


def test_uuid_filter_finds_only_devices_with_the_service(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.call(HCI0, ADAPTER, "SetDiscoveryFilter", "a{sv}", {"UUIDs": dbus.Array(["180d"], signature="s")})
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: found_paths(sim))
    sim.wait_for(lambda: False, timeout=0.1)
    assert found_paths(sim) == {"/org/bluez/hci0/dev_AA_BB_CC_DD_EE_03"}


@pytest.mark.parametrize("bad", [{"RSSI": dbus.Int32(-60)}, {"Nope": dbus.Boolean(True)},
                                 {"Transport": "radio"}, {"RSSI": dbus.Int16(-60), "Pathloss": dbus.UInt16(3)}])
def test_malformed_filters_are_invalid_arguments(sim, bad):
    with pytest.raises(dbus.DBusException) as error:
        sim.call(HCI0, ADAPTER, "SetDiscoveryFilter", "a{sv}", bad)
    assert error.value.get_dbus_name() == "org.bluez.Error.InvalidArguments"


def test_second_start_from_the_same_client_is_in_progress_and_stop_without_start_fails(sim, address):
    from client import Client

    sim.call(HCI0, ADAPTER, "StartDiscovery")
    with pytest.raises(dbus.DBusException) as twice:
        sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert twice.value.get_dbus_name() == "org.bluez.Error.InProgress"
    other = Client(address)
    try:
        with pytest.raises(dbus.DBusException) as never_started:
            other.call(HCI0, ADAPTER, "StopDiscovery")
        assert never_started.value.get_dbus_message() == "No discovery started"
        other.call(HCI0, ADAPTER, "StartDiscovery")
        sim.call(HCI0, ADAPTER, "StopDiscovery")
        assert sim.get(HCI0, ADAPTER, "Discovering")  # the other client still discovers
        other.close()
        assert sim.wait_for(lambda: not sim.get(HCI0, ADAPTER, "Discovering"))  # its session left with it
    finally:
        other.close()


def test_start_discovery_with_the_adapter_off_is_not_ready(sim):
    sim.ctl("SetPowered", "b", False)
    with pytest.raises(dbus.DBusException) as error:
        sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert error.value.get_dbus_name() == "org.bluez.Error.NotReady"


def test_remove_device_takes_it_and_its_gatt_objects_away_until_rediscovered(sim):
    sim.connect()
    sim.call(HCI0, ADAPTER, "RemoveDevice", "o", dbus.ObjectPath(DEV1))
    assert not any(str(p).startswith(DEV1) for p in sim.managed())
    assert sim.wait_for(lambda: any(str(e[4][0]) == DEV1 for e in sim.signals("InterfacesRemoved")))
    removed = [str(e[4][0]) for e in sim.signals("InterfacesRemoved")]
    assert removed[-1] == DEV1 and len(removed) > 1  # GATT objects first, the device last
    with pytest.raises(dbus.DBusException) as gone:
        sim.call(HCI0, ADAPTER, "RemoveDevice", "o", dbus.ObjectPath(DEV1))
    assert gone.value.get_dbus_name() == "org.bluez.Error.DoesNotExist"
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: DEV1 in {str(e[4][0]) for e in sim.signals("InterfacesAdded")})


def test_a_discovered_device_gets_its_gatt_objects_on_first_connect(sim):
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    sim.wait_for(lambda: DEV4 in found_paths(sim))
    assert not any(str(p).startswith(DEV4 + "/") for p in sim.managed())
    sim.clear()
    sim.connect(DEV4)
    sim.wait_for(lambda: len(sim.signals("InterfacesAdded")) > 0)
    services = [e for e in sim.signals("InterfacesAdded") if str(e[4][0]).startswith(DEV4 + "/service")]
    assert any(e[4][1].get("org.bluez.GattService1", {}).get("UUID") == full("180f") for e in services)
    resolved_at = next(i for i, e in enumerate(sim.events) if e[0] == "signal" and e[3] == "PropertiesChanged"
                       and "ServicesResolved" in e[4][1])
    first_added = next(i for i, e in enumerate(sim.events) if e[0] == "signal" and e[3] == "InterfacesAdded")
    assert first_added < resolved_at


def test_set_advertising_false_hides_a_device_from_discovery(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.ctl("SetAdvertising", "sb", "AA:BB:CC:DD:EE:04", False)
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: len(found_paths(sim)) >= 4)
    sim.wait_for(lambda: False, timeout=0.1)
    assert DEV4 not in found_paths(sim) and len(found_paths(sim)) == 4
