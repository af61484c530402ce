"""GATT client objects the way bluetoothd's src/gatt-client.c exports them: GattService1, GattCharacteristic1,
GattDescriptor1, with ReadValue / WriteValue / StartNotify / StopNotify and per-client notify sessions.

Fidelity notes (all as in bluetoothd): `Value` only exists once a value has been read or notified; every read
and every notification emits PropertiesChanged(Value), even when the value is unchanged; StartNotify on a
disconnected device succeeds and the session is enabled when the link is ready again (also after a
reconnect); `MTU` exists only while connected.
"""

from __future__ import annotations

from dataclasses import dataclass

import dbus

from bluezsim.dispatch import (
    PENDING,
    export,
    failed,
    in_progress,
    invalid_args,
    not_connected,
    not_permitted,
    not_supported,
)
from bluezsim.runtime import RUNTIME
from bluezsim.world import CCC_DESCRIPTOR, CharacteristicSpec, DescriptorSpec

SERVICE = "org.bluez.GattService1"
CHARACTERISTIC = "org.bluez.GattCharacteristic1"
DESCRIPTOR = "org.bluez.GattDescriptor1"
FIRST_HANDLE = 0x000C
LINK_MTU = 247
MAX_VALUE = 512


def parse_options(options, with_type: bool) -> tuple[int, str | None]:
    """The `offset` (uint16) and `type` (string) options; wrong variant types are InvalidArguments."""
    offset, kind = 0, None
    for key, value in options.items():
        name = str(key).lower()
        if name == "offset":
            if not isinstance(value, dbus.UInt16):
                raise invalid_args()
            offset = int(value)
        elif with_type and name == "type":
            if not isinstance(value, dbus.String):
                raise invalid_args()
            kind = str(value).lower()
    return offset, kind


def _after_gatt_delay(bluetoothd, action) -> None:
    delay = int(RUNTIME.timings["gatt_ms"])
    if delay > 0:
        bluetoothd.after(delay, action)
    else:
        action()


@dataclass
class NotifySession:
    """One client's StartNotify on one characteristic; `active` once the CCC is written on a live link."""

    active: bool = False
    pending: object = None


class Characteristic:
    """A characteristic object and the peripheral-side value behind it."""

    def __init__(self, bluetoothd, device, service_path: str, spec: CharacteristicSpec, handle: int) -> None:
        self.bluetoothd = bluetoothd
        self.device = device
        self.spec = spec
        self.uuid = spec.uuid
        self.flags = list(spec.flags)
        self.path = f"{service_path}/char{handle:04x}"
        self.value = bytes(spec.value)
        self.sessions: dict[str, NotifySession] = {}
        self.notifying = False
        self.echo_target = None
        self.descriptors: list[Descriptor] = []
        self._reads: list = []
        self._write_call = None
        self._tick_timer = None
        self._tick = 0
        props = {
            "UUID": dbus.String(spec.uuid),
            "Service": dbus.ObjectPath(service_path),
            "Handle": dbus.UInt16(handle),
            "Flags": dbus.Array(self.flags, signature="s"),
        }
        if self.can_notify:
            props["Notifying"] = dbus.Boolean(False)
        if "write-without-response" in self.flags:
            props["WriteAcquired"] = dbus.Boolean(False)
        if "notify" in self.flags:
            props["NotifyAcquired"] = dbus.Boolean(False)
        self.obj = bluetoothd.add_object(self.path, CHARACTERISTIC, props)
        export(self.obj, CHARACTERISTIC, "ReadValue", "a{sv}", "ay", self.read_value)
        export(self.obj, CHARACTERISTIC, "WriteValue", "aya{sv}", "", self.write_value)
        export(self.obj, CHARACTERISTIC, "StartNotify", "", "", self.start_notify)
        export(self.obj, CHARACTERISTIC, "StopNotify", "", "", self.stop_notify)
        bluetoothd.watch_senders(self.client_gone)

    @property
    def can_notify(self) -> bool:
        """Whether the characteristic supports notifications or indications."""
        return "notify" in self.flags or "indicate" in self.flags

    def _changed(self, **values) -> None:
        self.bluetoothd.properties_changed(self.obj, CHARACTERISTIC, values)

    def _store(self, value: bytes) -> None:
        """bluetoothd writes what it read or was notified into its cache and always signals Value."""
        self._changed(Value=dbus.ByteArray(value))

    # ---- read / write -------------------------------------------------------------------------------------

    def read_value(self, call, options):
        """Reads from the peripheral; concurrent reads at the same offset share one ATT request."""
        if not self.device.connected:
            raise failed("Not connected")
        offset, _ = parse_options(options, with_type=False)
        if self._reads:
            if self._reads[0][1] != offset:
                raise in_progress()
            self._reads.append((call, offset))
            return PENDING
        self._reads.append((call, offset))
        link = self.device.link
        _after_gatt_delay(self.bluetoothd, lambda: self._finish_read(link))
        return PENDING

    def _finish_read(self, link: int) -> None:
        waiting, self._reads = self._reads, []
        if not waiting:
            return
        offset = waiting[0][1]
        error = None
        if not self.device.connected or self.device.link != link:
            error = failed("Not connected")
        elif "read" not in self.flags:
            error = not_permitted("Read not permitted")
        elif offset > len(self.value):
            error = invalid_args("Invalid offset")
        if error is not None:
            for call, _ in waiting:
                call.fail(error)
            return
        value = self.value
        self._store(value)
        for call, _ in waiting:
            call.reply(dbus.ByteArray(value[offset:]))

    def write_value(self, call, value, options):
        """Writes with response ("request") or without ("command"), chosen by `type` or by the flags."""
        if not self.device.connected:
            raise failed("Not connected")
        if self._write_call is not None:
            raise in_progress()
        offset, kind = parse_options(options, with_type=True)
        value = bytes(value)
        if (kind is None and ("write" in self.flags or "reliable-write" in self.flags)) or kind in (
            "request",
            "reliable",
        ):
            return self._write_request(call, value, offset)
        if (kind is not None and kind != "command") or offset or (
            kind is None and "write-without-response" not in self.flags
        ):
            raise not_supported()
        if len(value) > LINK_MTU - 3:
            raise failed("Failed to initiate write")
        if "write-without-response" in self.flags:  # a peripheral drops commands it does not support
            self.bluetoothd.after(0, lambda: self._written(value))
        return None

    def _write_request(self, call, value: bytes, offset: int):
        self._write_call = call
        link = self.device.link

        def finish() -> None:
            self._write_call = None
            if not self.device.connected or self.device.link != link:
                call.fail(failed("Not connected"))
            elif "write" not in self.flags and "reliable-write" not in self.flags:
                call.fail(not_permitted("Write not permitted"))
            elif offset + len(value) > MAX_VALUE:
                call.fail(invalid_args("Invalid Length"))
            else:
                call.reply()
                written = self.value[:offset].ljust(offset, b"\x00") + value if offset else value
                self.bluetoothd.after(0, lambda: self._written(written))

        _after_gatt_delay(self.bluetoothd, finish)
        return PENDING

    def _written(self, value: bytes) -> None:
        """The peripheral received a write: it keeps the value, and the echo service sends it back."""
        if not self.device.connected:
            return
        self.value = value
        if self.echo_target is not None:
            self.echo_target.notify(value)

    # ---- notifications ------------------------------------------------------------------------------------

    def start_notify(self, call):
        """Starts this client's notify session (success at once when disconnected: enabled on reconnect)."""
        if self.device.disconnecting:
            raise not_connected()
        if not self.can_notify:
            raise not_supported()
        session = self.sessions.get(call.sender)
        if session is not None:
            if session.active:
                return None
            raise in_progress()
        session = NotifySession()
        self.sessions[call.sender] = session
        if not self.device.connected:
            return None
        session.pending = call
        if not self.device.resolved:
            return PENDING
        link = self.device.link

        def enable() -> None:
            if session.pending is not call:
                return
            session.pending = None
            if self.device.link != link or not self.device.resolved:
                call.fail(failed("Not connected"))
                return
            session.active = True
            self._update_notifying()
            call.reply()

        _after_gatt_delay(self.bluetoothd, enable)
        return PENDING

    def stop_notify(self, call):
        """Ends this client's notify session."""
        session = self.sessions.pop(call.sender, None)
        if session is None:
            raise failed("No notify session started")
        if session.pending is not None:
            session.pending.fail(failed("Cancelled"))
        self._update_notifying()
        return None

    def client_gone(self, sender: str) -> None:
        """A client that leaves the bus loses its notify session."""
        if self.sessions.pop(sender, None) is not None:
            self._update_notifying()

    def _update_notifying(self) -> None:
        active = self.device.connected and any(session.active for session in self.sessions.values())
        if active == self.notifying:
            return
        self.notifying = active
        self._changed(Notifying=dbus.Boolean(active))
        if active and self.spec.behaviour in ("battery", "temperature", "heart-rate"):
            self._tick_timer = self.bluetoothd.every(int(RUNTIME.timings["notify_ms"]), self._next_value)
        elif not active:
            self.bluetoothd.cancel(self._tick_timer)
            self._tick_timer = None

    def _next_value(self) -> bool:
        if not self.notifying:
            self._tick_timer = None
            return False
        self._tick += 1
        behaviour = self.spec.behaviour
        if behaviour == "battery":
            level = self.value[0] if self.value else 100
            value = bytes([level - 1 if level > 1 else 100])
        elif behaviour == "temperature":
            base = int.from_bytes(self.spec.value, "little", signed=True)
            swing = (0, 5, 10, 5, 0, -5, -10, -5)[self._tick % 8]
            value = (base + swing).to_bytes(2, "little", signed=True)
        else:
            value = bytes([0x00, 60 + (self._tick * 7) % 25])
        self.notify(value)
        return True

    def notify(self, value: bytes) -> bool:
        """The peripheral sends a notification; it reaches clients only while notifying on a live link."""
        self.value = bytes(value)
        if not (self.notifying and self.device.connected):
            return False
        self._store(self.value)
        self.device.notification_sent(self)
        return True

    # ---- link events --------------------------------------------------------------------------------------

    def link_ready(self) -> None:
        """Services resolved: MTU appears and registered notify sessions are (re-)enabled."""
        self._changed(MTU=dbus.UInt16(LINK_MTU))
        pending = []
        for session in self.sessions.values():
            session.active = True
            if session.pending is not None:
                pending.append(session.pending)
                session.pending = None
        self._update_notifying()
        for call in pending:
            call.reply()

    def link_lost(self) -> None:
        """The link ended: sessions stay registered but inactive, Notifying goes false, MTU disappears."""
        for session in self.sessions.values():
            session.active = False
            if session.pending is not None:
                session.pending.fail(failed("Not connected"))
                session.pending = None
        self.obj.props[CHARACTERISTIC].pop("MTU", None)
        self._update_notifying()


class Descriptor:
    """A descriptor object; the CCC reflects the characteristic's notify state and is not writable."""

    def __init__(self, bluetoothd, characteristic: Characteristic, spec: DescriptorSpec, handle: int) -> None:
        self.bluetoothd = bluetoothd
        self.characteristic = characteristic
        self.spec = spec
        self.uuid = spec.uuid
        self.path = f"{characteristic.path}/desc{handle:04x}"
        self.value = bytes(spec.value)
        props = {
            "UUID": dbus.String(spec.uuid),
            "Characteristic": dbus.ObjectPath(characteristic.path),
            "Handle": dbus.UInt16(handle),
        }
        self.obj = bluetoothd.add_object(self.path, DESCRIPTOR, props)
        export(self.obj, DESCRIPTOR, "ReadValue", "a{sv}", "ay", self.read_value)
        export(self.obj, DESCRIPTOR, "WriteValue", "aya{sv}", "", self.write_value)

    def read_value(self, call, options):
        """Reads the descriptor (the CCC reads 0x0001 while notifying)."""
        if not self.characteristic.device.connected:
            raise failed("Not connected")
        offset, _ = parse_options(options, with_type=False)
        if self.uuid == CCC_DESCRIPTOR:
            value = b"\x01\x00" if self.characteristic.notifying else b"\x00\x00"
        else:
            value = self.value
        if offset > len(value):
            raise invalid_args("Invalid offset")
        self.bluetoothd.properties_changed(self.obj, DESCRIPTOR, {"Value": dbus.ByteArray(value)})
        return dbus.ByteArray(value[offset:])

    def write_value(self, call, value, options):
        """Writes the descriptor; the CCC is only driven through StartNotify/StopNotify."""
        if not self.characteristic.device.connected:
            raise failed("Not connected")
        parse_options(options, with_type=False)
        if self.uuid == CCC_DESCRIPTOR or "write" not in self.spec.flags:
            raise not_permitted("Write not permitted")
        self.value = bytes(value)
        return None


def build_gatt(bluetoothd, device) -> tuple[list, list]:
    """Creates the device's GATT objects in handle order; returns (objects, characteristics)."""
    objects, characteristics = [], []
    handle = FIRST_HANDLE
    for service_spec in device.spec.services:
        service_path = f"{device.path}/service{handle:04x}"
        service = bluetoothd.add_object(
            service_path,
            SERVICE,
            {
                "UUID": dbus.String(service_spec.uuid),
                "Device": dbus.ObjectPath(device.path),
                "Primary": dbus.Boolean(True),
                "Includes": dbus.Array([], signature="o"),
                "Handle": dbus.UInt16(handle),
            },
        )
        objects.append(service)
        handle += 1
        in_service = []
        for char_spec in service_spec.characteristics:
            characteristic = Characteristic(bluetoothd, device, service_path, char_spec, handle)
            objects.append(characteristic.obj)
            handle += 2
            for descriptor_spec in char_spec.descriptors:
                descriptor = Descriptor(bluetoothd, characteristic, descriptor_spec, handle)
                characteristic.descriptors.append(descriptor)
                objects.append(descriptor.obj)
                handle += 1
            in_service.append(characteristic)
        outputs = [c for c in in_service if c.spec.behaviour == "echo-out"]
        for characteristic in in_service:
            if characteristic.spec.behaviour == "echo-in" and outputs:
                characteristic.echo_target = outputs[0]
        characteristics.extend(in_service)
        handle += 1
    return objects, characteristics
