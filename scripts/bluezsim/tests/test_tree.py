"""The object tree: GetManagedObjects shape, property types, and the standard interfaces."""

import dbus
import pytest

from client import ADAPTER, CHAR, DESC, DEV1, DEVICE, ECHO_IN, ECHO_OUT, HCI0, PROPS, SERVICE, full


def test_managed_objects_hold_adapter_cached_devices_and_their_gatt_tree(sim):
    objects = sim.managed()
    adapter = objects[HCI0][ADAPTER]
    assert adapter["Address"] == "00:1A:7D:DA:71:0A"
    assert adapter["Powered"] is not None and bool(adapter["Powered"])
    assert not adapter["Discovering"]
    devices = {str(path): ifaces[DEVICE] for path, ifaces in objects.items() if DEVICE in ifaces}
    assert sorted(str(d["Address"]) for d in devices.values()) == [
        "AA:BB:CC:DD:EE:01", "AA:BB:CC:DD:EE:02", "AA:BB:CC:DD:EE:03"]
    thermo = devices[DEV1]
    assert thermo["Name"] == "Thermo-1" and thermo["Alias"] == "Thermo-1"
    assert thermo["Adapter"] == HCI0
    assert not thermo["Connected"] and not thermo["ServicesResolved"] and not thermo["Paired"]
    assert "RSSI" not in thermo  # only while a discovery sees it
    assert full("180f") in thermo["UUIDs"]
    services = {str(ifaces[SERVICE]["UUID"]): str(path) for path, ifaces in objects.items()
                if SERVICE in ifaces and str(path).startswith(DEV1 + "/")}
    assert set(services) == {full("180f"), full("181a"), full("180a"), "c0defeed-0000-4000-8000-000000000000"}
    battery = services[full("180f")]
    level = battery + "/char000d"
    assert objects[level][CHAR]["UUID"] == full("2a19")
    assert objects[level][CHAR]["Service"] == battery
    assert list(objects[level][CHAR]["Flags"]) == ["read", "notify"]
    assert objects[level][CHAR]["Notifying"] is not None and not objects[level][CHAR]["Notifying"]
    assert "Value" not in objects[level][CHAR]  # bluetoothd only has a Value once one was read or notified
    assert "MTU" not in objects[level][CHAR]  # only while connected
    ccc = level + "/desc000f"
    assert objects[ccc][DESC]["UUID"] == full("2902")
    assert objects[ccc][DESC]["Characteristic"] == level
    echo_in = [ifaces[CHAR] for ifaces in objects.values() if CHAR in ifaces and ifaces[CHAR]["UUID"] == ECHO_IN]
    assert list(echo_in[0]["Flags"]) == ["write-without-response", "write"]
    assert any(CHAR in ifaces and ifaces[CHAR]["UUID"] == ECHO_OUT for ifaces in objects.values())


def test_property_types_are_the_ones_bluez_sends(sim):
    device = sim.managed()[DEV1][DEVICE]
    assert isinstance(device["Appearance"], dbus.UInt16)
    assert isinstance(device["Adapter"], dbus.ObjectPath)
    assert device["UUIDs"].signature == "s"
    data = device["ManufacturerData"]
    assert isinstance(data, dbus.Dictionary) and data.signature == "qv"
    key = next(iter(data))
    assert isinstance(key, dbus.UInt16) and key == 0xFFFF
    assert bytes(data[key]) == b"\x01\x02"


def test_uncached_device_is_not_in_the_tree_before_a_discovery(sim):
    paths = [str(p) for p in sim.managed()]
    assert not any("EE_04" in p for p in paths)


def test_get_of_unknown_property_and_interface_is_invalid_args(sim):
    with pytest.raises(dbus.DBusException) as unknown_property:
        sim.get(DEV1, DEVICE, "Nope")
    assert unknown_property.value.get_dbus_name() == "org.freedesktop.DBus.Error.InvalidArgs"
    with pytest.raises(dbus.DBusException) as unknown_interface:
        sim.call(DEV1, PROPS, "GetAll", "s", "org.bluez.Nope1")
    assert unknown_interface.value.get_dbus_name() == "org.freedesktop.DBus.Error.InvalidArgs"


def test_set_of_read_only_property_is_refused_and_writable_one_signals(sim):
    with pytest.raises(dbus.DBusException) as error:
        sim.call(DEV1, PROPS, "Set", "ssv", DEVICE, "Name", dbus.String("x", variant_level=1))
    assert error.value.get_dbus_name() == "org.freedesktop.DBus.Error.PropertyReadOnly"
    sim.call(DEV1, PROPS, "Set", "ssv", DEVICE, "Trusted", dbus.Boolean(True, variant_level=1))
    assert sim.get(DEV1, DEVICE, "Trusted")
    assert sim.wait_for(lambda: sim.changes(DEV1, DEVICE, "Trusted"))


def test_a_call_with_the_wrong_signature_is_unknown_method(sim):
    sim.connect()
    with pytest.raises(dbus.DBusException) as error:
        sim.call(DEV1 + "/service000c/char000d", CHAR, "ReadValue")  # the pre-5.40 signature
    assert error.value.get_dbus_name() == "org.freedesktop.DBus.Error.UnknownMethod"


def test_introspection_looks_like_bluetoothd(sim):
    from xml.etree import ElementTree

    xml = sim.call(DEV1, "org.freedesktop.DBus.Introspectable", "Introspect")
    tree = ElementTree.fromstring(str(xml))
    interfaces = {i.get("name"): i for i in tree.findall("interface")}
    assert "org.freedesktop.DBus.Mock" not in interfaces
    access = {p.get("name"): p.get("access") for p in interfaces[DEVICE].findall("property")}
    assert access["Connected"] == "read" and access["Trusted"] == "readwrite"
    assert [s.get("name") for s in interfaces[PROPS].findall("signal")] == ["PropertiesChanged"]
    assert {n.get("name") for n in tree.findall("node")} >= {"service000c", "service001c"}
