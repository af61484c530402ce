"""The control interface tests use to steer the simulator: org.contextbus.BlueZSim.Control on object / of the
well-known name org.contextbus.BlueZSim, on the same bus as the simulated BlueZ.

Counts: `count` <= 0 means "until cleared". Targets: "*" (everything), "AA:BB:CC:DD:EE:01" (a device and its
GATT objects), "AA:BB:CC:DD:EE:01/2a19" (the GATT objects with that UUID on that device), or an object path.
"""

from __future__ import annotations

import re
import time

import dbus
import dbus.service

from bluezsim.runtime import DEFAULT_TIMINGS, RUNTIME, target_matches
from bluezsim.world import full_uuid, is_address

BUS_NAME = "org.contextbus.BlueZSim"
INTERFACE = "org.contextbus.BlueZSim.Control"
ERROR = "org.contextbus.BlueZSim.Error."
_ERROR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def _error(kind: str, message: str) -> dbus.exceptions.DBusException:
    return dbus.exceptions.DBusException(message, name=ERROR + kind)


def _count(count: int) -> int:
    return int(count) if count > 0 else -1


class Control(dbus.service.Object):
    """The control object. `supervisor` starts and stops bluetoothd incarnations."""

    # dbusmock replaces dbus-python's method lookup with one that first looks in `methods`.
    methods: dict = {}

    def __init__(self, connection, supervisor) -> None:
        super().__init__(connection, "/")
        self.supervisor = supervisor
        self.streams: list = []
        # The sequence numbers of the stream values that reached clients, by target as given to StartStream.
        self.delivered: dict[str, list[int]] = {}

    # ---- helpers ------------------------------------------------------------------------------------------

    def _bluetoothd(self):
        bluetoothd = RUNTIME.bluetoothd
        if bluetoothd is None or bluetoothd.stopped:
            raise _error("NotRunning", "bluetoothd is stopped")
        return bluetoothd

    def _device(self, target: str):
        bluetoothd = self._bluetoothd()
        for device in bluetoothd.devices.values():
            if target.upper() == device.address or target == device.path:
                return device
        raise _error("UnknownDevice", f"no device {target!r} in bluetoothd's object tree")

    def _characteristic(self, target: str):
        address, _, uuid = target.partition("/")
        if not uuid:
            raise _error("InvalidArgs", "target must be ADDRESS/UUID")
        try:
            wanted = full_uuid(uuid)
        except ValueError as error:
            raise _error("InvalidArgs", str(error)) from None
        device = self._device(address)
        for characteristic in device.characteristics:
            if characteristic.uuid == wanted:
                return characteristic
        raise _error("UnknownCharacteristic", f"{address} has no characteristic {uuid} (services not resolved?)")

    def _add(self, **fields) -> int:
        try:
            return RUNTIME.add_fault(**fields).id
        except ValueError as error:
            raise _error("InvalidArgs", str(error)) from None

    # ---- faults -------------------------------------------------------------------------------------------

    @dbus.service.method(INTERFACE, in_signature="ssssi", out_signature="u")
    def FailMethod(self, target, method, error_name, message, count):
        """Calls of `method` on `target` reply error `error_name`/`message`, `count` times. Returns the fault id."""
        if not _ERROR_NAME.match(error_name):
            raise _error("InvalidArgs", f"not a D-Bus error name: {str(error_name)!r}")
        return self._add(kind="fail", target=str(target), method=str(method), remaining=_count(count),
                         error=str(error_name), message=str(message))

    @dbus.service.method(INTERFACE, in_signature="ssi", out_signature="u")
    def HangMethod(self, target, method, count):
        """Calls of `method` on `target` never get a reply, `count` times."""
        return self._add(kind="hang", target=str(target), method=str(method), remaining=_count(count))

    @dbus.service.method(INTERFACE, in_signature="ssui", out_signature="u")
    def DelayMethod(self, target, method, delay_ms, count):
        """Calls of `method` on `target` start `delay_ms` late, `count` times."""
        return self._add(kind="delay", target=str(target), method=str(method), remaining=_count(count),
                         delay_ms=int(delay_ms))

    @dbus.service.method(INTERFACE, in_signature="si", out_signature="u")
    def NeverResolveServices(self, target, count):
        """The next `count` connections of `target` become Connected but never ServicesResolved (Connect
        replies once Connected)."""
        return self._add(kind="never-resolve", target=str(target), method="", remaining=_count(count))

    @dbus.service.method(INTERFACE, in_signature="sui", out_signature="u")
    def DropAfterConnect(self, target, after_ms, count):
        """The next `count` connections of `target` are lost `after_ms` after their services resolve."""
        return self._add(kind="drop-after-connect", target=str(target), method="", remaining=_count(count),
                         delay_ms=int(after_ms))

    @dbus.service.method(INTERFACE, in_signature="sui", out_signature="u")
    def DropDuringNotify(self, target, after_notifications, count):
        """The link is lost right after the `after_notifications`-th notification of a connection (counted per
        link over the characteristics `target` names), `count` times."""
        return self._add(kind="drop-during-notify", target=str(target), method="", remaining=_count(count),
                         after_notifications=max(1, int(after_notifications)))

    @dbus.service.method(INTERFACE, in_signature="sui", out_signature="u")
    def DropRandomly(self, target, mean_ms, count):
        """Every link of `target` is lost after a random time (exponential, mean `mean_ms`), `count` drops in all."""
        return self._add(kind="drop-randomly", target=str(target), method="", remaining=_count(count),
                         delay_ms=max(1, int(mean_ms)))

    @dbus.service.method(INTERFACE, in_signature="su", out_signature="b")
    def DropConnection(self, target, after_ms):
        """Drops the device's link now (after_ms 0; returns whether there was a link) or after `after_ms`
        (returns true; nothing happens if the device is not connected then)."""
        device = self._device(str(target))
        if after_ms == 0:
            return device.drop()
        bluetoothd = self._bluetoothd()
        bluetoothd.after(int(after_ms), device.drop)
        return True

    @dbus.service.method(INTERFACE, in_signature="u", out_signature="b")
    def ClearFault(self, fault_id):
        """Removes one fault; false if there is none with that id."""
        return RUNTIME.clear_fault(int(fault_id))

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def ResetFaults(self):
        """Removes every fault."""
        RUNTIME.reset_faults()

    @dbus.service.method(INTERFACE, in_signature="", out_signature="a(usssis)")
    def ListFaults(self):
        """Every fault: (id, kind, target, method, remaining (-1 = until cleared), detail)."""
        return dbus.Array(
            [
                dbus.Struct((f.id, f.kind, f.target, f.method, f.remaining, f.detail()), signature="usssis")
                for f in RUNTIME.faults
            ],
            signature="(usssis)",
        )

    # ---- call log -----------------------------------------------------------------------------------------

    @dbus.service.method(INTERFACE, in_signature="", out_signature="a(dssssss)")
    def GetCallLog(self):
        """Every BlueZ method call since the last clear: (unix time, sender, object path, interface, method,
        arguments summary, outcome: "ok" | error name | "hung" | "pending")."""
        return dbus.Array(
            [
                dbus.Struct((c.time, c.sender, c.path, c.interface, c.method, c.args, c.outcome),
                            signature="dssssss")
                for c in RUNTIME.calls
            ],
            signature="(dssssss)",
        )

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def ClearCallLog(self):
        """Empties the call log."""
        RUNTIME.calls = []

    @dbus.service.method(INTERFACE, in_signature="ss", out_signature="u")
    def CountCalls(self, target, method):
        """How many logged calls of `method` ("*" = any) went to `target`."""
        return sum(
            1
            for c in RUNTIME.calls
            if (method in ("", "*") or c.method == method) and target_matches(str(target), c.path, None)
        )

    # ---- bluetoothd lifecycle -----------------------------------------------------------------------------

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def StopBluetoothd(self):
        """bluetoothd leaves the bus: org.bluez loses its owner, pending calls get errors from the bus."""
        self.supervisor.stop_bluetoothd()

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def StartBluetoothd(self):
        """A fresh bluetoothd (new unique name, initial device state) takes org.bluez."""
        self.supervisor.start_bluetoothd()

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def RestartBluetoothd(self):
        """Stop then start."""
        self.supervisor.stop_bluetoothd()
        self.supervisor.start_bluetoothd()

    @dbus.service.method(INTERFACE, in_signature="", out_signature="b")
    def IsBluetoothdRunning(self):
        """Whether bluetoothd is on the bus."""
        return self.supervisor.running

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def Reset(self):
        """Back to the start state: no faults, empty call log, default timings, a fresh bluetoothd."""
        RUNTIME.reset_faults()
        self.streams = []
        self.delivered = {}
        RUNTIME.timings = dict(DEFAULT_TIMINGS)
        RUNTIME.timings.update(self.supervisor.timing_overrides)
        self.supervisor.stop_bluetoothd()
        self.supervisor.start_bluetoothd()
        RUNTIME.calls = []

    # ---- world --------------------------------------------------------------------------------------------

    @dbus.service.method(INTERFACE, in_signature="su", out_signature="")
    def SetTiming(self, name, ms):
        """Sets one timing (see GetTimings for the names)."""
        if name not in DEFAULT_TIMINGS:
            raise _error("InvalidArgs", f"unknown timing {str(name)!r}; known: {', '.join(DEFAULT_TIMINGS)}")
        RUNTIME.timings[str(name)] = int(ms)

    @dbus.service.method(INTERFACE, in_signature="", out_signature="a{su}")
    def GetTimings(self):
        """Every timing in milliseconds."""
        return dbus.Dictionary(RUNTIME.timings, signature="su")

    @dbus.service.method(INTERFACE, in_signature="b", out_signature="")
    def SetPowered(self, powered):
        """Powers the adapter on or off (as rfkill or a controller reset would)."""
        self._bluetoothd().adapter.power(bool(powered))

    @dbus.service.method(INTERFACE, in_signature="sb", out_signature="")
    def SetAdvertising(self, address, advertising):
        """Whether discovery can find the device."""
        if not is_address(str(address)):
            raise _error("InvalidArgs", f"not an address: {str(address)!r}")
        spec = self._bluetoothd().adapter.world.get(str(address).upper())
        if spec is None:
            raise _error("UnknownDevice", f"no device {address} in the simulated world")
        spec.advertising = bool(advertising)

    def _spec(self, address):
        if not is_address(str(address)):
            raise _error("InvalidArgs", f"not an address: {str(address)!r}")
        adapter = self._bluetoothd().adapter
        spec = adapter.world.get(str(address).upper())
        if spec is None:
            raise _error("UnknownDevice", f"no device {address} in the simulated world")
        return adapter, spec

    @dbus.service.method(INTERFACE, in_signature="sb", out_signature="")
    def SetInRange(self, address, in_range):
        """Whether the device is in radio range: out of range it drops its link, discovery does not find it and
        Connect fails (`le-connection-abort-by-local`, after connect_ms)."""
        adapter, spec = self._spec(address)
        spec.in_range = bool(in_range)
        device = adapter.bluetoothd.devices.get(spec.address)
        if not spec.in_range and device is not None:
            device.drop()

    @dbus.service.method(INTERFACE, in_signature="sqay", out_signature="", byte_arrays=True)
    def SetManufacturerData(self, address, company, data):
        """What the device advertises as manufacturer data (one company id; empty data: none); a running discovery
        signals it at once."""
        adapter, spec = self._spec(address)
        spec.manufacturer_id, spec.manufacturer_data = int(company), bytes(data)
        spec.advertisement = "static"
        adapter.advertised_data_changed(spec)

    @dbus.service.method(INTERFACE, in_signature="ssay", out_signature="", byte_arrays=True)
    def SetServiceData(self, address, uuid, data):
        """The device's advertised service data under `uuid` (empty data removes it); a running discovery signals
        it at once."""
        adapter, spec = self._spec(address)
        try:
            key = full_uuid(str(uuid))
        except ValueError as error:
            raise _error("InvalidArgs", str(error)) from None
        if data:
            spec.service_data[key] = bytes(data)
        else:
            spec.service_data.pop(key, None)
        spec.advertisement = "static"
        adapter.advertised_data_changed(spec)

    @dbus.service.method(INTERFACE, in_signature="ssv", out_signature="")
    def SetDeviceProperty(self, address, name, value):
        """Sets any Device1 property of a device BlueZ holds to any value, with PropertiesChanged, whatever its type:
        for clients' handling of malformed advertised data (e.g. ManufacturerData whose variants are not `ay`)."""
        device = self._device(str(address))
        self._bluetoothd().properties_changed(device.obj, "org.bluez.Device1", {str(name): value})

    @dbus.service.method(INTERFACE, in_signature="sayu", out_signature="u", byte_arrays=True)
    def NotifyMany(self, target, value, count):
        """The peripheral notifies `value` `count` times in a row on ADDRESS/UUID; returns how many reached
        clients."""
        characteristic = self._characteristic(str(target))
        return sum(1 for _ in range(int(count)) if characteristic.notify(bytes(value)))

    @dbus.service.method(INTERFACE, in_signature="suu", out_signature="")
    def StartStream(self, target, interval_ms, count):
        """The peripheral notifies on ADDRESS/UUID every `interval_ms`, `count` times: each value is its sequence
        number (uint32, from 0) and the simulator's CLOCK_MONOTONIC at sending in nanoseconds (uint64), little-endian
        (12 bytes), for measuring delivery latency. A notification that reaches no client is still counted."""
        characteristic = self._characteristic(str(target))
        bluetoothd = self._bluetoothd()
        state = {"sent": 0}
        delivered = self.delivered.setdefault(str(target), [])

        def tick() -> bool:
            if state["sent"] >= int(count):
                return False
            payload = state["sent"].to_bytes(4, "little") + time.monotonic_ns().to_bytes(8, "little")
            if characteristic.notify(payload):
                delivered.append(state["sent"])
            state["sent"] += 1
            return state["sent"] < int(count)

        self.streams.append(bluetoothd.every(max(1, int(interval_ms)), tick))

    @dbus.service.method(INTERFACE, in_signature="s", out_signature="au")
    def StreamDeliveries(self, target):
        """The sequence numbers of the values streams on ADDRESS/UUID (as given to StartStream) sent to clients,
        in order: those sent while notifying on a live link, the ones a client must have received."""
        return dbus.Array(self.delivered.get(str(target), []), signature="u")

    @dbus.service.method(INTERFACE, in_signature="", out_signature="")
    def StopStreams(self):
        """Stops every stream started with StartStream."""
        bluetoothd = RUNTIME.bluetoothd
        for timer in self.streams:
            if bluetoothd is not None:
                bluetoothd.cancel(timer)
        self.streams = []

    @dbus.service.method(INTERFACE, in_signature="say", out_signature="", byte_arrays=True)
    def SetValue(self, target, value):
        """Sets the value the peripheral holds for ADDRESS/UUID (what the next read returns)."""
        self._characteristic(str(target)).value = bytes(value)

    @dbus.service.method(INTERFACE, in_signature="say", out_signature="b", byte_arrays=True)
    def Notify(self, target, value):
        """The peripheral notifies `value` on ADDRESS/UUID; true if it reached clients (notifying, connected)."""
        return self._characteristic(str(target)).notify(bytes(value))
