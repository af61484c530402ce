"""A dbus-python client of the simulator for the tests: calls, a signal recorder, and a GLib pump."""

from __future__ import annotations

import time

import dbus
import dbus.bus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)

BLUEZ = "org.bluez"
CONTROL = "org.contextbus.BlueZSim"
CONTROL_IFACE = "org.contextbus.BlueZSim.Control"
ADAPTER = "org.bluez.Adapter1"
DEVICE = "org.bluez.Device1"
SERVICE = "org.bluez.GattService1"
CHAR = "org.bluez.GattCharacteristic1"
DESC = "org.bluez.GattDescriptor1"
PROPS = "org.freedesktop.DBus.Properties"
OM = "org.freedesktop.DBus.ObjectManager"
HCI0 = "/org/bluez/hci0"
DEV1 = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01"
ADDR1 = "AA:BB:CC:DD:EE:01"


def full(short: str) -> str:
    return f"0000{short}-0000-1000-8000-00805f9b34fb"


ECHO_IN = "c0defeed-0001-4000-8000-000000000000"
ECHO_OUT = "c0defeed-0002-4000-8000-000000000000"


def pump(seconds: float = 0.0) -> None:
    """Dispatches pending D-Bus messages for `seconds` (at least once)."""
    context = GLib.MainContext.default()
    deadline = time.monotonic() + seconds
    while True:
        while context.pending():
            context.iteration(False)
        if time.monotonic() >= deadline:
            return
        time.sleep(0.002)


class Client:
    """One client connection; records every signal org.bluez sends and async call outcomes, in order."""

    def __init__(self, address: str) -> None:
        self.bus = dbus.bus.BusConnection(address)
        self.events: list[tuple] = []
        self.bus.add_signal_receiver(
            self._signal,
            bus_name=BLUEZ,
            path_keyword="path",
            member_keyword="member",
            interface_keyword="interface",
            byte_arrays=True,
        )

    def close(self) -> None:
        self.bus.close()

    @property
    def unique_name(self) -> str:
        return self.bus.get_unique_name()

    def _signal(self, *args, path=None, member=None, interface=None):
        self.events.append(("signal", str(path), str(interface), str(member), args))

    # ---- calls --------------------------------------------------------------------------------------------

    def call(self, path, interface, method, signature="", *args, timeout=5.0):
        return self.bus.call_blocking(BLUEZ, path, interface, method, signature, args, timeout=timeout,
                                      byte_arrays=True)

    def call_async(self, tag, path, interface, method, signature="", *args, timeout=5.0):
        """Sends a call; its reply or error is appended to `events` as ("reply", tag, value|error)."""
        self.bus.call_async(
            BLUEZ, path, interface, method, signature, args,
            lambda *value: self.events.append(("reply", tag, value)),
            lambda error: self.events.append(("error", tag, error)),
            timeout=timeout, byte_arrays=True,
        )

    def ctl(self, method, signature="", *args, timeout=5.0):
        return self.bus.call_blocking(CONTROL, "/", CONTROL_IFACE, method, signature, args, timeout=timeout,
                                      byte_arrays=True)

    def get(self, path, interface, name):
        return self.call(path, PROPS, "Get", "ss", interface, name)

    def managed(self) -> dict:
        return self.call("/", OM, "GetManagedObjects")

    def gatt_path(self, address: str, uuid: str, interface: str = CHAR) -> str:
        """The object path of the characteristic (or descriptor) with `uuid` on the device at `address`."""
        prefix = "/org/bluez/hci0/dev_" + address.replace(":", "_")
        for path, interfaces in self.managed().items():
            if path.startswith(prefix + "/") and interface in interfaces and interfaces[interface]["UUID"] == uuid:
                return str(path)
        raise KeyError(f"{uuid} on {address}")

    def connect(self, path=DEV1) -> None:
        self.call(path, DEVICE, "Connect")

    # ---- events -------------------------------------------------------------------------------------------

    def clear(self) -> None:
        """Dispatches what has arrived, then forgets every recorded event."""
        pump(0.01)
        self.events.clear()

    def wait_for(self, predicate, timeout: float = 3.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pump()
            if predicate():
                return True
            time.sleep(0.003)
        pump()
        return bool(predicate())

    def changes(self, path=None, interface=None, name=None) -> list:
        """(path, interface, {changed}, [invalidated]) for each PropertiesChanged received, filtered."""
        result = []
        for event in self.events:
            if event[0] != "signal" or event[3] != "PropertiesChanged":
                continue
            iface, changed, invalidated = event[4]
            if path is not None and event[1] != path:
                continue
            if interface is not None and str(iface) != interface:
                continue
            if name is not None and name not in changed and name not in invalidated:
                continue
            result.append((event[1], str(iface), dict(changed), [str(n) for n in invalidated]))
        return result

    def values(self, path) -> list[bytes]:
        """The Value of each PropertiesChanged on a characteristic: the notifications a client sees."""
        return [bytes(c[2]["Value"]) for c in self.changes(path, CHAR, "Value") if "Value" in c[2]]

    def signals(self, member) -> list:
        return [event for event in self.events if event[0] == "signal" and event[3] == member]

    def replies(self, tag) -> list:
        return [event for event in self.events if event[0] in ("reply", "error") and event[1] == tag]
