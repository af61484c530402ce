"""org.bluez.Adapter1 on hci0: power, per-client discovery sessions with filters, devices found by discovery,
RemoveDevice. Semantics follow bluetoothd's src/adapter.c.
"""

from __future__ import annotations

import dbus

from bluezsim.advertising import advance
from bluezsim.dispatch import does_not_exist, export, failed, in_progress, invalid_args, not_ready
from bluezsim.runtime import RUNTIME
from bluezsim.world import DeviceSpec, device_path, full_uuid

ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"

_FILTER_TYPES = {
    "UUIDs": dbus.Array,
    "RSSI": dbus.Int16,
    "Pathloss": dbus.UInt16,
    "Transport": dbus.String,
    "DuplicateData": dbus.Boolean,
    "Discoverable": dbus.Boolean,
    "Pattern": dbus.String,
}


def _ms(name: str) -> int:
    return int(RUNTIME.timings[name])


class Adapter:
    """The one adapter, hci0, with the world's devices in range of it."""

    def __init__(self, bluetoothd, obj, world: list[DeviceSpec], address: str) -> None:
        self.bluetoothd = bluetoothd
        self.obj = obj
        self.path = obj.path
        self.world = {spec.address: spec for spec in world}
        self.sessions: dict[str, dict | None] = {}
        self.filters: dict[str, dict] = {}
        self.found: set[str] = set()
        self.forgotten: set[str] = set()
        self.discovery_timers: list[int] = []
        self.rssi_timer = None
        self.rssi_tick = 0
        props = obj.props[ADAPTER]
        props["Address"] = dbus.String(address)
        props["Name"] = dbus.String("bluez-sim")
        props["Alias"] = dbus.String("bluez-sim")
        props["Discoverable"] = dbus.Boolean(False)
        props["Discovering"] = dbus.Boolean(False)
        props["Powered"] = dbus.Boolean(True)
        props.pop("DiscoveryFilter", None)
        export(obj, ADAPTER, "StartDiscovery", "", "", self.start_discovery)
        export(obj, ADAPTER, "StopDiscovery", "", "", self.stop_discovery)
        export(obj, ADAPTER, "SetDiscoveryFilter", "a{sv}", "", self.set_discovery_filter)
        export(obj, ADAPTER, "GetDiscoveryFilters", "", "as", lambda call: dbus.Array(list(_FILTER_TYPES), "s"))
        export(obj, ADAPTER, "RemoveDevice", "o", "", self.remove_device)
        setters = bluetoothd.setters
        setters[(ADAPTER, "Powered")] = self.set_powered
        setters[(ADAPTER, "Alias")] = self._simple_setter("Alias", dbus.String)
        setters[(ADAPTER, "Discoverable")] = self._simple_setter("Discoverable", dbus.Boolean)
        setters[(ADAPTER, "Pairable")] = self._simple_setter("Pairable", dbus.Boolean)
        setters[(ADAPTER, "DiscoverableTimeout")] = self._simple_setter("DiscoverableTimeout", dbus.UInt32)
        setters[(ADAPTER, "PairableTimeout")] = self._simple_setter("PairableTimeout", dbus.UInt32)
        bluetoothd.watch_senders(self.client_gone)

    # ---- power --------------------------------------------------------------------------------------------

    @property
    def powered(self) -> bool:
        """Whether the adapter is powered."""
        return bool(self.obj.props[ADAPTER]["Powered"])

    def _simple_setter(self, name: str, kind):
        def setter(call, obj, value):
            if not isinstance(value, kind):
                raise invalid_args()
            self.bluetoothd.properties_changed(obj, ADAPTER, {name: kind(value)})

        return setter

    def set_powered(self, call, obj, value) -> None:
        """Powering off ends discovery and every connection, as the controller going down does."""
        if not isinstance(value, dbus.Boolean):
            raise invalid_args()
        self.power(bool(value))

    def power(self, on: bool) -> None:
        """Switches the adapter on or off, with the signals bluetoothd sends."""
        if on == self.powered:
            return
        if not on:
            for device in list(self.bluetoothd.devices.values()):
                device.link_lost()
            self.sessions.clear()
            self._discovery_ended()
        self.bluetoothd.properties_changed(self.obj, ADAPTER, {"Powered": dbus.Boolean(on)})

    # ---- discovery ----------------------------------------------------------------------------------------

    def set_discovery_filter(self, call, options) -> None:
        """Stores this client's filter; an empty dict clears it. Checks types like bluetoothd does."""
        parsed = {}
        for key, value in options.items():
            kind = _FILTER_TYPES.get(str(key))
            if kind is None or not isinstance(value, kind):
                raise invalid_args()
            parsed[str(key)] = value
        if "RSSI" in parsed and "Pathloss" in parsed:
            raise invalid_args()
        if "Transport" in parsed and parsed["Transport"] not in ("auto", "bredr", "le"):
            raise invalid_args()
        if "UUIDs" in parsed:
            try:
                parsed["UUIDs"] = [full_uuid(str(uuid)) for uuid in parsed["UUIDs"]]
            except ValueError:
                raise invalid_args() from None
        if parsed:
            self.filters[call.sender] = parsed
        else:
            self.filters.pop(call.sender, None)
        if call.sender in self.sessions:
            self.sessions[call.sender] = self.filters.get(call.sender)

    def start_discovery(self, call) -> None:
        """Adds this client's discovery session; the first session starts the radio scan."""
        if not self.powered:
            raise not_ready()
        if call.sender in self.sessions:
            raise in_progress("Operation already in progress")
        first = not self.sessions
        self.sessions[call.sender] = self.filters.get(call.sender)
        if first:
            self.bluetoothd.properties_changed(self.obj, ADAPTER, {"Discovering": dbus.Boolean(True)})
            self.rssi_timer = self.bluetoothd.every(_ms("rssi_ms"), self._rssi_tick)
        self._schedule_advertisements()

    def stop_discovery(self, call) -> None:
        """Ends this client's session; the last one stops the scan."""
        if call.sender not in self.sessions:
            raise failed("No discovery started")
        del self.sessions[call.sender]
        if not self.sessions:
            self._discovery_ended()

    def client_gone(self, sender: str) -> None:
        """A client that leaves the bus loses its discovery session and filter."""
        self.filters.pop(sender, None)
        if self.sessions.pop(sender, "absent") != "absent" and not self.sessions:
            self._discovery_ended()

    @property
    def discovering(self) -> bool:
        """Whether any client has a discovery session."""
        return bool(self.sessions)

    @property
    def duplicate_data(self) -> bool:
        """Whether a session asked for DuplicateData: then every advertisement signals ManufacturerData and
        ServiceData, not only those that changed them."""
        return any(bool(session_filter.get("DuplicateData", False)) for session_filter in self.sessions.values()
                   if session_filter)

    def _merged_filter(self) -> tuple[set | None, int | None]:
        """UUIDs (None = any) and minimum RSSI (None = any) over every session, as bluetoothd merges them."""
        uuids: set | None = set()
        rssi: int | None = None
        for session_filter in self.sessions.values():
            if not session_filter:
                return None, None
            wanted = session_filter.get("UUIDs")
            if not wanted:
                uuids = None
            elif uuids is not None:
                uuids |= set(wanted)
            if "RSSI" in session_filter:
                value = int(session_filter["RSSI"])
                rssi = value if rssi is None else min(rssi, value)
            else:
                rssi = -127 if rssi is None else rssi
        if uuids is not None and not uuids:
            uuids = None
        return uuids, rssi

    def _passes(self, spec: DeviceSpec) -> bool:
        if not spec.advertising or not spec.in_range:
            return False
        uuids, rssi = self._merged_filter()
        # As bluetoothd does, a UUID filter matches advertised service UUIDs and service data UUIDs.
        if uuids is not None and not uuids & (set(spec.service_uuids) | set(spec.service_data)):
            return False
        return rssi is None or spec.rssi >= rssi

    def _schedule_advertisements(self) -> None:
        spacing = _ms("discovery_ms")
        for index, spec in enumerate(self.world.values()):
            self.discovery_timers.append(
                self.bluetoothd.after(spacing * (index + 1), lambda spec=spec: self._advertisement(spec, 0))
            )

    def _advertisement(self, spec: DeviceSpec, jitter: int) -> None:
        """One advertisement received from `spec`: creates the device, or updates its RSSI (and its advertised data
        when the advertisement changed it, or on every advertisement with DuplicateData)."""
        if not self.discovering or not self._passes(spec):
            return
        from bluezsim.device import Device, advertised_data  # imported here: device.py imports this module

        changed_data = advance(spec)
        rssi = dbus.Int16(spec.rssi + jitter)
        device = self.bluetoothd.devices.get(spec.address)
        if device is None:
            paired = spec.paired and spec.address not in self.forgotten
            device = Device(self.bluetoothd, self, spec, with_gatt=False, paired=paired, rssi=int(rssi))
            self.found.add(spec.address)
            self.bluetoothd.interfaces_added(device.obj)
            return
        self.found.add(spec.address)
        changed = {"RSSI": rssi}
        if "TxPower" not in device.obj.props[DEVICE]:
            changed["TxPower"] = dbus.Int16(spec.tx_power)
        if changed_data or self.duplicate_data:
            changed.update(advertised_data(spec))
        self.bluetoothd.properties_changed(device.obj, DEVICE, changed)

    def advertised_data_changed(self, spec: DeviceSpec) -> None:
        """The control interface changed what `spec` advertises: a discovery hears it at once."""
        from bluezsim.device import advertised_data

        device = self.bluetoothd.devices.get(spec.address)
        if device is None or not self.discovering or not self._passes(spec):
            return
        data = advertised_data(spec)
        gone = [name for name in ("ManufacturerData", "ServiceData")
                if name not in data and name in device.obj.props[DEVICE]]
        self.bluetoothd.properties_changed(device.obj, DEVICE, data, gone)

    def _rssi_tick(self) -> bool:
        if not self.discovering:
            return False
        self.rssi_tick += 1
        jitter = (-2, -1, 0, 1, 2, 1, 0, -1)[self.rssi_tick % 8]
        for address in sorted(self.found):
            spec = self.world.get(address)
            if spec is not None and address in self.bluetoothd.devices:
                self._advertisement(spec, jitter)
        return True

    def _discovery_ended(self) -> None:
        for timer in self.discovery_timers:
            self.bluetoothd.cancel(timer)
        self.discovery_timers = []
        self.bluetoothd.cancel(self.rssi_timer)
        self.rssi_timer = None
        if self.obj.props[ADAPTER]["Discovering"]:
            self.bluetoothd.properties_changed(self.obj, ADAPTER, {"Discovering": dbus.Boolean(False)})
        for address in sorted(self.found):
            device = self.bluetoothd.devices.get(address)
            if device is not None:
                gone = [name for name in ("RSSI", "TxPower") if name in device.obj.props[DEVICE]]
                if gone:
                    self.bluetoothd.properties_changed(device.obj, DEVICE, {}, gone)
        self.found.clear()

    # ---- devices ------------------------------------------------------------------------------------------

    def remove_device(self, call, path) -> object:
        """Disconnects (if needed) and forgets a device: its GATT objects and itself leave the tree."""
        device = next((d for d in self.bluetoothd.devices.values() if d.path == str(path)), None)
        if device is None:
            raise does_not_exist()
        device.link_lost()
        device.unexport()
        del self.bluetoothd.devices[device.address]
        self.found.discard(device.address)
        self.forgotten.add(device.address)
        return None

    def device_path(self, address: str) -> str:
        """The object path of the device with this address."""
        return device_path(self.path, address)

