"""org.bluez.Device1 for one LE peripheral: Connect / Disconnect / Pair / CancelPairing with the property
changes bluetoothd emits, link loss, and the connection-level faults (never-resolve, drop-after-connect,
drop-during-notify). Semantics follow bluetoothd's src/device.c for LE links.
"""

from __future__ import annotations

import random

import dbus

from bluezsim.dispatch import PENDING, BluezError, ERROR, export, failed, in_progress, invalid_args, not_ready
from bluezsim.gatt import build_gatt
from bluezsim.runtime import RUNTIME
from bluezsim.world import DeviceSpec

DEVICE = "org.bluez.Device1"


def _ms(name: str) -> int:
    return int(RUNTIME.timings[name])


class Device:
    """One device object and its link state machine: idle → connecting → connected → resolved → idle."""

    def __init__(self, bluetoothd, adapter, spec: DeviceSpec, with_gatt: bool, paired: bool, rssi) -> None:
        self.bluetoothd = bluetoothd
        self.adapter = adapter
        self.spec = spec
        self.address = spec.address
        self.path = adapter.device_path(spec.address)
        self.connected = False
        self.resolved = False
        self.connecting = False
        self.disconnecting = False
        self.link = 0  # incremented on every link-up, so timers of an old link can tell they are stale
        self.notifications: dict[int, int] = {}  # drop-during-notify fault id -> its notifications this link
        self._on_link_ready = None
        self._on_link_failed = None
        self._timers: list[int] = []
        self._disconnect_calls: list = []
        self._pair_call = None
        props = {
            "Address": dbus.String(spec.address),
            "AddressType": dbus.String("public"),
            "Name": dbus.String(spec.name),
            "Alias": dbus.String(spec.name),
            "Appearance": dbus.UInt16(spec.appearance),
            "Paired": dbus.Boolean(paired),
            "Trusted": dbus.Boolean(False),
            "Blocked": dbus.Boolean(False),
            "LegacyPairing": dbus.Boolean(False),
            "Connected": dbus.Boolean(False),
            "UUIDs": dbus.Array(spec.service_uuids, signature="s"),
            "Adapter": dbus.ObjectPath(adapter.path),
            "ServicesResolved": dbus.Boolean(False),
            "AdvertisingFlags": dbus.ByteArray(b"\x06"),
        }
        props.update(advertised_data(spec))
        if rssi is not None:
            props["RSSI"] = dbus.Int16(rssi)
            props["TxPower"] = dbus.Int16(spec.tx_power)
        self.obj = bluetoothd.add_object(self.path, DEVICE, props)
        export(self.obj, DEVICE, "Connect", "", "", self.connect)
        export(self.obj, DEVICE, "Disconnect", "", "", self.disconnect)
        export(self.obj, DEVICE, "Pair", "", "", self.pair)
        export(self.obj, DEVICE, "CancelPairing", "", "", self.cancel_pairing)
        export(self.obj, DEVICE, "ConnectProfile", "s", "", self.profile_call)
        export(self.obj, DEVICE, "DisconnectProfile", "s", "", self.profile_call)
        bluetoothd.setters[(DEVICE, "Alias")] = _set_alias
        bluetoothd.setters[(DEVICE, "Trusted")] = _flag_setter("Trusted")
        bluetoothd.setters[(DEVICE, "Blocked")] = _flag_setter("Blocked")
        bluetoothd.devices[spec.address] = self
        self.characteristics = []
        self.gatt_objects = []
        if with_gatt:
            self.export_gatt(announce=False)

    # ---- properties ---------------------------------------------------------------------------------------

    def _changed(self, **values) -> None:
        self.bluetoothd.properties_changed(self.obj, DEVICE, values)

    # ---- GATT objects -------------------------------------------------------------------------------------

    def export_gatt(self, announce: bool) -> None:
        """Creates the GATT service/characteristic/descriptor objects (with InterfacesAdded if `announce`)."""
        if self.gatt_objects:
            return
        self.gatt_objects, self.characteristics = build_gatt(self.bluetoothd, self)
        if announce:
            for obj in self.gatt_objects:
                self.bluetoothd.interfaces_added(obj)

    def unexport(self) -> None:
        """Removes the GATT objects and the device object, with InterfacesRemoved for each."""
        for obj in reversed(self.gatt_objects):
            interfaces = list(obj.props)
            self.bluetoothd.remove_object(obj.path)
            self.bluetoothd.interfaces_removed(obj.path, interfaces)
        self.gatt_objects = []
        self.characteristics = []
        interfaces = list(self.obj.props)
        self.bluetoothd.remove_object(self.path)
        self.bluetoothd.interfaces_removed(self.path, interfaces)

    # ---- methods ------------------------------------------------------------------------------------------

    def connect(self, call):
        """Connects the LE link; replies once services are resolved (or at once if already connected). A device out
        of range, or one that does not accept connections, fails after `connect_ms` as a controller whose connection
        attempt timed out does (`le-connection-timeout`, what bluetoothd answers for ETIMEDOUT)."""
        if not self.adapter.powered:
            raise not_ready()
        if self.connecting or self.disconnecting or self._pair_call is not None:
            raise in_progress()
        if self.connected:
            return None
        if self.bluetoothd.parameters.get("one_connect_per_adapter") and self._another_link_setting_up():
            raise in_progress()
        self._start_link(lambda: call.reply(), call.fail)
        return PENDING

    def disconnect(self, call):
        """Cancels a pending connect, or drops the link after `disconnect_ms`; success when not connected."""
        if self.connecting:
            self.link_lost(failed("Cancelled"))
            return None
        if not self.connected:
            return None
        self._disconnect_calls.append(call)
        if not self.disconnecting:
            self.disconnecting = True
            self._timers.append(self.bluetoothd.after(_ms("disconnect_ms"), self._disconnected))
        return PENDING

    def _disconnected(self) -> None:
        calls, self._disconnect_calls = self._disconnect_calls, []
        self.link_lost()
        for call in calls:
            call.reply()

    def pair(self, call):
        """Connects if needed, then pairs after `pair_ms`."""
        if bool(self.obj.props[DEVICE]["Paired"]):
            raise BluezError(ERROR + "AlreadyExists", "Already Exists")
        if self._pair_call is not None or self.connecting or self.disconnecting:
            raise in_progress()
        if not self.adapter.powered:
            raise not_ready()
        self._pair_call = call
        link = self.link

        def paired() -> None:
            if self._pair_call is not call:
                return
            if not self.connected or self.link != link:
                self._pair_call = None
                call.fail(failed("Not connected"))
                return
            self._pair_call = None
            self._changed(Paired=dbus.Boolean(True))
            call.reply()

        def linked() -> None:
            nonlocal link
            link = self.link
            self._timers.append(self.bluetoothd.after(_ms("pair_ms"), paired))

        def link_failed(error) -> None:
            if self._pair_call is call:
                self._pair_call = None
            call.fail(error)

        if self.connected:
            linked()
        else:
            self._start_link(linked, link_failed)
        return PENDING

    def cancel_pairing(self, call):
        """Aborts a running Pair (which fails with AuthenticationCanceled)."""
        pending = self._pair_call
        if pending is None:
            raise BluezError(ERROR + "DoesNotExist", "Does Not Exist")
        self._pair_call = None
        pending.fail(BluezError(ERROR + "AuthenticationCanceled", "Authentication Canceled"))
        return None

    def profile_call(self, call, uuid):
        """ConnectProfile/DisconnectProfile: LE devices have no BR/EDR profiles to act on."""
        raise invalid_args()

    # ---- the link -----------------------------------------------------------------------------------------

    def _another_link_setting_up(self) -> bool:
        """Whether another device on this adapter is connecting and its link is not up yet."""
        return any(other is not self and other.adapter is self.adapter and other.connecting and not other.connected
                   for other in self.bluetoothd.devices.values())

    def _start_link(self, on_ready, on_failed) -> None:
        self.connecting = True
        self._on_link_ready = on_ready
        self._on_link_failed = on_failed
        self._timers.append(self.bluetoothd.after(_ms("connect_ms"), self._link_up))

    def _link_up(self) -> None:
        if not (self.spec.in_range and self.spec.connectable):
            self._finish_connect(failed("le-connection-timeout"))
            return
        self.link += 1
        self.notifications = {}
        self.connected = True
        self._changed(Connected=dbus.Boolean(True))
        if RUNTIME.take(("never-resolve",), self.path, "Connect", None) is not None:
            self._finish_connect(None)
            return
        self._timers.append(self.bluetoothd.after(_ms("resolve_ms"), self._resolve))

    def _resolve(self) -> None:
        self.export_gatt(announce=True)
        self.resolved = True
        self._changed(ServicesResolved=dbus.Boolean(True))
        for characteristic in self.characteristics:
            characteristic.link_ready()
        self._finish_connect(None)
        fault = RUNTIME.take(("drop-after-connect",), self.path, "Connect", None)
        if fault is not None:
            link = self.link
            self.bluetoothd.after(fault.delay_ms, lambda: self.drop() if self.link == link else None)
        self._schedule_random_drop()

    def _schedule_random_drop(self) -> None:
        """With a drop-randomly fault on this device, the link is lost after a random time (exponential, mean
        `delay_ms`); each drop uses up one occurrence."""
        fault = next((f for f in RUNTIME.faults if f.kind == "drop-randomly" and f.matches(self.path, "Connect", None)),
                     None)
        if fault is None:
            return
        link = self.link
        generator = random.Random(fault.id * 7919 + self.link)

        def fire() -> None:
            if self.link != link or not self.connected or fault.remaining == 0 or fault not in RUNTIME.faults:
                return
            fault.consume()
            self.drop()

        self._timers.append(self.bluetoothd.after(max(1, int(generator.expovariate(1 / fault.delay_ms))), fire))

    def _finish_connect(self, error) -> None:
        if not self.connecting:
            return
        self.connecting = False
        on_ready, on_failed = self._on_link_ready, self._on_link_failed
        self._on_link_ready = self._on_link_failed = None
        if error is None:
            on_ready()
        else:
            on_failed(error)

    def link_lost(self, error=None) -> None:
        """Ends the link now (locally or by the remote side): ServicesResolved and Connected go false,
        notifications stop, operations in flight fail, a pending connect fails with `error`."""
        for timer in self._timers:
            self.bluetoothd.cancel(timer)
        self._timers = []
        self.disconnecting = False
        was_connected, was_resolved = self.connected, self.resolved
        self.connected = False
        self.resolved = False
        for characteristic in self.characteristics:
            characteristic.link_lost()
        if was_resolved:
            self._changed(ServicesResolved=dbus.Boolean(False))
        if was_connected:
            self._changed(Connected=dbus.Boolean(False))
        self._finish_connect(error or failed("Software caused connection abort"))
        if self._pair_call is not None:
            pair_call, self._pair_call = self._pair_call, None
            pair_call.fail(BluezError(ERROR + "AuthenticationFailed", "Authentication Failed"))
        calls, self._disconnect_calls = self._disconnect_calls, []
        for call in calls:
            call.reply()

    def drop(self) -> bool:
        """The remote side (or the radio) ends the link; False if there was no link to drop."""
        if not (self.connected or self.connecting):
            return False
        self.link_lost()
        return True

    def notification_sent(self, characteristic) -> None:
        """Counts a notification against each drop-during-notify fault naming this characteristic, and drops
        the link (once the notification is out) when one reaches its count."""
        for fault in RUNTIME.faults:
            if fault.kind != "drop-during-notify" or not fault.matches(
                characteristic.path, "StartNotify", characteristic.uuid
            ):
                continue
            seen = self.notifications.get(fault.id, 0) + 1
            self.notifications[fault.id] = seen
            if seen >= fault.after_notifications:
                fault.consume()
                link = self.link
                self.bluetoothd.after(0, lambda: self.drop() if self.link == link else None)
                return


def advertised_data(spec: DeviceSpec) -> dict:
    """ManufacturerData (`a{qv}`) and ServiceData (`a{sv}`), each variant holding an `ay`: the shapes bluetoothd sends
    and clients decode. Empty ones are left out, as bluetoothd leaves them out."""
    props = {}
    if spec.manufacturer_data:
        props["ManufacturerData"] = dbus.Dictionary(
            {dbus.UInt16(spec.manufacturer_id): dbus.ByteArray(spec.manufacturer_data, variant_level=1)},
            signature="qv",
        )
    if spec.service_data:
        props["ServiceData"] = dbus.Dictionary(
            {dbus.String(uuid): dbus.ByteArray(data, variant_level=1) for uuid, data in spec.service_data.items()},
            signature="sv",
        )
    return props


def _device_at(obj) -> Device:
    from bluezsim.bluetoothd import current

    for device in current().devices.values():
        if device.obj is obj:
            return device
    raise invalid_args()


def _set_alias(call, obj, value) -> None:
    """Alias is writable; an empty alias falls back to the name."""
    if not isinstance(value, dbus.String):
        raise invalid_args()
    device = _device_at(obj)
    device._changed(Alias=dbus.String(value or device.spec.name))


def _flag_setter(name: str):
    """A setter for a writable boolean property (Trusted, Blocked); blocking drops the link."""

    def setter(call, obj, value) -> None:
        if not isinstance(value, dbus.Boolean):
            raise invalid_args()
        device = _device_at(obj)
        device._changed(**{name: dbus.Boolean(value)})
        if name == "Blocked" and value:
            device.link_lost()

    return setter
