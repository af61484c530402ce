"""What devices that push need of the simulator: advertised data changing over time (a BTHome sensor, a counting
manufacturer data), advertised data set from the control interface (also malformed), devices out of range, links
dropped at random, a writable descriptor, and bursts and timed streams of notifications."""

import time

import dbus

from client import ADAPTER, ADDR1, CHAR, DESC, DEV1, DEVICE, ECHO_OUT, HCI0, full

DEV4 = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_04"
DEV5 = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_05"
BTHOME = full("fcd2")


def test_the_bthome_sensor_advertises_changing_service_data_and_no_services(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.ctl("SetTiming", "su", "rssi_ms", 20)
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: any(str(e[4][0]) == DEV5 for e in sim.signals("InterfacesAdded")))
    added = next(e for e in sim.signals("InterfacesAdded") if str(e[4][0]) == DEV5)[4][1][DEVICE]
    assert added["Name"] == "BTHome-5" and list(added["UUIDs"]) == []
    first = bytes(added["ServiceData"][BTHOME])
    assert first[0] == 0x40 and first[1:3] == bytes([0x00, 0x01])  # BTHome v2, packet id 1: the first advertisement
    assert sim.wait_for(lambda: len(sim.changes(DEV5, DEVICE, "ServiceData")) >= 2)
    payloads = [bytes(c[2]["ServiceData"][BTHOME]) for c in sim.changes(DEV5, DEVICE, "ServiceData")]
    assert len({p[2] for p in payloads}) == len(payloads)  # a new packet id every time
    # Objects: packet id, battery 93 %, temperature (0.01 °C) around 21.50, humidity (0.01 %) around 45.
    assert all(p[3:5] == bytes([0x01, 93]) and p[5] == 0x02 and p[8] == 0x03 for p in payloads)
    assert all(abs(int.from_bytes(p[6:8], "little", signed=True) - 2150) <= 10 for p in payloads)


def test_the_bthome_sensor_does_not_accept_a_connection(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: any(str(e[4][0]) == DEV5 for e in sim.signals("InterfacesAdded")))
    try:
        sim.call(DEV5, DEVICE, "Connect")
        raise AssertionError("Connect succeeded")
    except dbus.DBusException as error:
        assert error.get_dbus_name() == "org.bluez.Error.Failed"
        assert error.get_dbus_message() == "le-connection-timeout"
    assert not sim.get(DEV5, DEVICE, "Connected")


def test_a_uuid_filter_matches_service_data(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.call(HCI0, ADAPTER, "SetDiscoveryFilter", "a{sv}", {"UUIDs": dbus.Array(["fcd2"], signature="s")})
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: sim.signals("InterfacesAdded"))
    sim.wait_for(lambda: False, timeout=0.1)
    assert {str(e[4][0]) for e in sim.signals("InterfacesAdded") if DEVICE in e[4][1]} == {DEV5}


def test_manufacturer_data_counts_and_is_signalled_only_when_it_changes_unless_duplicates(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.ctl("SetTiming", "su", "rssi_ms", 20)
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: len(sim.changes(DEV4, DEVICE, "ManufacturerData")) >= 2)
    counters = [bytes(c[2]["ManufacturerData"][0xFFFF])[-1] for c in sim.changes(DEV4, DEVICE, "ManufacturerData")]
    assert counters == sorted(counters) and len(set(counters)) == len(counters)
    # Thermo-1's data never changes: its RSSI updates carry no ManufacturerData...
    assert sim.wait_for(lambda: len(sim.changes(DEV1, DEVICE, "RSSI")) >= 3)
    assert not sim.changes(DEV1, DEVICE, "ManufacturerData")
    # ...unless a session asks for DuplicateData.
    sim.call(HCI0, ADAPTER, "SetDiscoveryFilter", "a{sv}", {"DuplicateData": True})
    assert sim.wait_for(lambda: len(sim.changes(DEV1, DEVICE, "ManufacturerData")) >= 2)


def test_advertised_data_set_from_the_control_interface_is_signalled_at_once(sim):
    sim.ctl("SetTiming", "su", "discovery_ms", 0)
    sim.call(HCI0, ADAPTER, "StartDiscovery")
    assert sim.wait_for(lambda: sim.changes(DEV1, DEVICE, "RSSI"))
    sim.ctl("SetServiceData", "ssay", ADDR1, "fcd2", dbus.ByteArray(bytes([0x40, 0x01, 0x50])))
    sim.ctl("SetManufacturerData", "sqay", ADDR1, dbus.UInt16(0x004C), dbus.ByteArray(b"\x02\x15"))
    assert sim.wait_for(lambda: sim.changes(DEV1, DEVICE, "ManufacturerData"))
    assert bytes(sim.changes(DEV1, DEVICE, "ServiceData")[-1][2]["ServiceData"][BTHOME]) == bytes([0x40, 0x01, 0x50])
    assert bytes(sim.get(DEV1, DEVICE, "ManufacturerData")[0x004C]) == b"\x02\x15"
    sim.ctl("SetServiceData", "ssay", ADDR1, "fcd2", dbus.ByteArray(b""))
    assert sim.wait_for(lambda: any("ServiceData" in inv for *_, inv in sim.changes(DEV1, DEVICE, "ServiceData")))
    # Any property, any type: what a misbehaving stack could send.
    sim.ctl("SetDeviceProperty", "ssv", ADDR1, "ManufacturerData",
            dbus.Dictionary({dbus.UInt16(1): dbus.String("not bytes", variant_level=1)}, signature="qv"))
    assert sim.wait_for(lambda: any(0x0001 in c[2].get("ManufacturerData", {})
                                    for c in sim.changes(DEV1, DEVICE, "ManufacturerData")))


def test_a_device_out_of_range_drops_its_link_fails_connects_and_is_not_found(sim):
    sim.connect()
    sim.ctl("SetInRange", "sb", ADDR1, False)
    assert sim.wait_for(lambda: not sim.get(DEV1, DEVICE, "Connected"))
    started = time.monotonic()
    try:
        sim.connect()
        raise AssertionError("Connect succeeded")
    except dbus.DBusException as error:
        assert error.get_dbus_message() == "le-connection-timeout"
    assert time.monotonic() - started >= 0.009  # after connect_ms, as a connection attempt that timed out
    sim.ctl("SetInRange", "sb", ADDR1, True)
    sim.connect()
    assert sim.get(DEV1, DEVICE, "Connected")


def test_links_drop_at_random_until_the_drops_are_used_up(sim):
    fault = sim.ctl("DropRandomly", "sui", ADDR1, dbus.UInt32(20), 2)
    for _ in range(2):
        sim.connect()
        assert sim.wait_for(lambda: not sim.get(DEV1, DEVICE, "Connected"), timeout=3)
    sim.connect()
    sim.wait_for(lambda: False, timeout=0.3)
    assert sim.get(DEV1, DEVICE, "Connected")
    listed = {f[0]: f for f in sim.ctl("ListFaults")}
    assert listed[fault][1] == "drop-randomly" and listed[fault][4] == 0


def test_echo_out_has_a_writable_user_description(sim):
    sim.connect()
    path = next(p for p in [str(p) for p, i in sim.managed().items() if DESC in i]
                if p.startswith(sim.gatt_path(ADDR1, ECHO_OUT) + "/") and sim.get(p, DESC, "UUID") == full("2901"))
    assert bytes(sim.call(path, DESC, "ReadValue", "a{sv}", {})) == b"Echo output"
    sim.call(path, DESC, "WriteValue", "aya{sv}", dbus.ByteArray(b"renamed"), {})
    assert bytes(sim.call(path, DESC, "ReadValue", "a{sv}", {})) == b"renamed"


def test_notify_many_and_streams_send_to_notifying_clients(sim):
    sim.connect()
    echo_out = sim.gatt_path(ADDR1, ECHO_OUT)
    sim.call(echo_out, CHAR, "StartNotify")
    sim.clear()
    assert sim.ctl("NotifyMany", "sayu", ADDR1 + "/" + ECHO_OUT, dbus.ByteArray(b"\x07"), dbus.UInt32(50)) == 50
    assert sim.wait_for(lambda: len(sim.values(echo_out)) == 50)
    sim.clear()
    sim.ctl("StartStream", "suu", ADDR1 + "/" + ECHO_OUT, dbus.UInt32(5), dbus.UInt32(10))
    assert sim.wait_for(lambda: len(sim.values(echo_out)) == 10)
    values = sim.values(echo_out)
    assert [int.from_bytes(v[:4], "little") for v in values] == list(range(10))
    sent = [int.from_bytes(v[4:12], "little") for v in values]
    assert sent == sorted(sent) and 0 < time.monotonic_ns() - sent[-1] < 5_000_000_000


def test_a_stream_counts_the_values_it_sent_to_clients_and_not_those_it_sent_while_nobody_was_notified(sim):
    sim.connect()
    echo_out = sim.gatt_path(ADDR1, ECHO_OUT)
    target = ADDR1 + "/" + ECHO_OUT
    sim.ctl("StartStream", "suu", target, dbus.UInt32(5), dbus.UInt32(10))  # nobody notified: none delivered
    time.sleep(0.2)
    assert list(sim.ctl("StreamDeliveries", "s", target)) == []
    sim.call(echo_out, CHAR, "StartNotify")
    sim.clear()
    sim.ctl("StartStream", "suu", target, dbus.UInt32(5), dbus.UInt32(10))
    assert sim.wait_for(lambda: len(sim.values(echo_out)) == 10)
    assert list(sim.ctl("StreamDeliveries", "s", target)) == list(range(10))
    assert list(sim.ctl("StreamDeliveries", "s", ADDR1 + "/2a19")) == []
