"""One incarnation of the simulated bluetoothd: the object tree it exports, its timers, its signal emission
and the standard interfaces (ObjectManager, Properties) done the way BlueZ's gdbus does them.

A restart of bluetoothd throws the instance away and builds a new one on a new bus connection.
"""

from __future__ import annotations

from xml.etree import ElementTree

import dbus
import dbus.lowlevel
from dbusmock import mockobject
from gi.repository import GLib

from bluezsim.dispatch import BluezError, export
from bluezsim.runtime import RUNTIME

OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
PROPERTIES = "org.freedesktop.DBus.Properties"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
READ_ONLY = "org.freedesktop.DBus.Error.PropertyReadOnly"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"


class Bluetoothd:
    """Owns the exported objects, the pending timers and the per-client sessions of one bluetoothd run."""

    def __init__(self, root, parameters: dict) -> None:
        self.root = root
        self.parameters = parameters
        self.timers: set[int] = set()
        self.hung_calls: list = []
        self.setters: dict = {}
        self.adapter = None
        self.devices: dict = {}
        self.stopped = False
        self._sender_watchers: list = []
        self._watch = None

    # ---- timers -------------------------------------------------------------------------------------------

    def after(self, ms: int, action) -> int:
        """Runs `action` once after `ms` milliseconds, unless this bluetoothd stops first. Returns a timer id."""
        holder = {}

        def fire() -> bool:
            self.timers.discard(holder["id"])
            if not self.stopped:
                action()
            return False

        holder["id"] = GLib.timeout_add(max(0, int(ms)), fire)
        self.timers.add(holder["id"])
        return holder["id"]

    def every(self, ms: int, action) -> int:
        """Runs `action` every `ms` milliseconds until it returns False or the timer is cancelled."""
        holder = {}

        def fire() -> bool:
            if self.stopped:
                self.timers.discard(holder["id"])
                return False
            keep = bool(action())
            if not keep:
                self.timers.discard(holder["id"])
            return keep

        holder["id"] = GLib.timeout_add(max(1, int(ms)), fire)
        self.timers.add(holder["id"])
        return holder["id"]

    def cancel(self, timer_id: int | None) -> None:
        """Cancels a timer from `after` or `every` (no-op for None or a finished timer)."""
        if timer_id is not None and timer_id in self.timers:
            self.timers.discard(timer_id)
            GLib.source_remove(timer_id)

    def stop(self) -> None:
        """Cancels every timer and unexports every object (the bus connection is closed by the caller)."""
        self.stopped = True
        for timer_id in list(self.timers):
            GLib.source_remove(timer_id)
        self.timers.clear()
        if self._watch is not None:
            self._watch.remove()
            self._watch = None
        for obj in list(mockobject.objects.values()):
            try:
                obj.remove_from_connection()
            except Exception:
                pass
        mockobject.objects.clear()

    # ---- senders ------------------------------------------------------------------------------------------

    def watch_senders(self, on_gone) -> None:
        """Calls `on_gone(unique_name)` whenever a client connection leaves the bus."""
        self._sender_watchers.append(on_gone)
        if self._watch is None:
            connection = self.root.connection

            def changed(name, old_owner, new_owner):
                if name.startswith(":") and not new_owner:
                    for watcher in list(self._sender_watchers):
                        watcher(str(name))

            self._watch = connection.add_signal_receiver(
                changed,
                signal_name="NameOwnerChanged",
                dbus_interface="org.freedesktop.DBus",
                path="/org/freedesktop/DBus",
                bus_name="org.freedesktop.DBus",
            )

    # ---- objects and signals ------------------------------------------------------------------------------

    def add_object(self, path: str, interface: str, props: dict):
        """Creates a mock object at `path` with one interface's properties (no signal)."""
        self.root.AddObject(path, interface, props, [])
        obj = mockobject.objects[path]
        obj.methods.pop(interface, None)  # AddObject leaves an empty method table we fill ourselves
        obj.methods.setdefault(interface, {})
        export_properties(self, obj)
        return obj

    def remove_object(self, path: str) -> None:
        """Unexports the object at `path` (no signal)."""
        if path in mockobject.objects:
            self.root.RemoveObject(path)

    def emit(self, obj, interface: str, name: str, signature: str, args: list) -> None:
        """Sends a signal from `obj` on every connection it is exported on."""
        message = dbus.lowlevel.SignalMessage(obj.path, interface, name)
        message.append(*args, signature=signature)
        for location in obj.locations:
            location[0].send_message(message)

    def properties_changed(self, obj, interface: str, changed: dict, invalidated=()) -> None:
        """Stores `changed` on `obj`, drops `invalidated`, and emits PropertiesChanged for both."""
        props = obj.props.setdefault(interface, {})
        props.update(changed)
        for name in invalidated:
            props.pop(name, None)
        self.emit(
            obj,
            PROPERTIES,
            "PropertiesChanged",
            "sa{sv}as",
            [interface, dbus.Dictionary(changed, signature="sv"), dbus.Array(list(invalidated), signature="s")],
        )

    def interfaces_added(self, obj) -> None:
        """Emits InterfacesAdded on / for every interface of `obj` that has properties."""
        interfaces = {name: dbus.Dictionary(props, signature="sv") for name, props in obj.props.items()}
        self.emit(
            self.root,
            OBJECT_MANAGER,
            "InterfacesAdded",
            "oa{sa{sv}}",
            [dbus.ObjectPath(obj.path), dbus.Dictionary(interfaces, signature="sa{sv}")],
        )

    def interfaces_removed(self, path: str, interfaces: list) -> None:
        """Emits InterfacesRemoved on / for `path`."""
        self.emit(
            self.root,
            OBJECT_MANAGER,
            "InterfacesRemoved",
            "oas",
            [dbus.ObjectPath(path), dbus.Array(interfaces, signature="s")],
        )

    def managed_objects(self) -> dbus.Dictionary:
        """What GetManagedObjects returns: every object but / with every interface that has properties."""
        result = {}
        for path in sorted(mockobject.objects):
            if path == "/":
                continue
            obj = mockobject.objects[path]
            result[dbus.ObjectPath(path)] = dbus.Dictionary(
                {name: dbus.Dictionary(props, signature="sv") for name, props in obj.props.items()},
                signature="sa{sv}",
            )
        return dbus.Dictionary(result, signature="oa{sa{sv}}")

    def export_object_manager(self) -> None:
        """Replaces dbusmock's GetManagedObjects on / with the logged, fault-injectable one."""
        self.root.methods.setdefault(OBJECT_MANAGER, {})
        export(self.root, OBJECT_MANAGER, "GetManagedObjects", "", "a{oa{sa{sv}}}",
               lambda call: self.managed_objects())
        export_properties(self, self.root)


def export_properties(bluetoothd: Bluetoothd, obj) -> None:
    """Puts BlueZ-style org.freedesktop.DBus.Properties Get/GetAll/Set on `obj` (logged, fault-injectable)."""

    def interface_props(interface: str) -> dict:
        props = obj.props.get(str(interface))
        if props is None:
            raise BluezError(INVALID_ARGS, f"No such interface '{interface}'")
        return props

    def get(call, interface, name):
        props = interface_props(interface)
        if name not in props:
            raise BluezError(INVALID_ARGS, f"No such property '{name}'")
        return props[name]

    def get_all(call, interface):
        return dbus.Dictionary(interface_props(interface), signature="sv")

    def set_(call, interface, name, value):
        props = interface_props(interface)
        if name not in props:
            raise BluezError(INVALID_ARGS, f"No such property '{name}'")
        setter = bluetoothd.setters.get((str(interface), str(name)))
        if setter is None:
            raise BluezError(READ_ONLY, f"Property '{name}' is not writable")
        return setter(call, obj, value)

    export(obj, PROPERTIES, "Get", "ss", "v", get)
    export(obj, PROPERTIES, "GetAll", "s", "a{sv}", get_all)
    export(obj, PROPERTIES, "Set", "ssv", "", set_)
    export_introspection(bluetoothd, obj)


_STANDARD_SIGNALS = {
    PROPERTIES: [("PropertiesChanged", [("interface", "s"), ("changed_properties", "a{sv}"),
                                        ("invalidated_properties", "as")])],
    OBJECT_MANAGER: [("InterfacesAdded", [("object", "o"), ("interfaces", "a{sa{sv}}")]),
                     ("InterfacesRemoved", [("object", "o"), ("interfaces", "as")])],
}


def export_introspection(bluetoothd: Bluetoothd, obj) -> None:
    """Introspection as bluetoothd shows it: without dbusmock's Mock interface, and with only the properties
    that have a setter marked writable (dbusmock marks every property readwrite)."""

    def introspect(self, object_path, connection):
        xml = mockobject.DBusMockObject.Introspect(self, object_path, connection)
        tree = ElementTree.fromstring(xml)
        for interface in tree.findall("interface"):
            if interface.get("name") == mockobject.MOCK_IFACE:
                tree.remove(interface)
                continue
            for prop in interface.findall("property"):
                writable = (interface.get("name"), prop.get("name")) in bluetoothd.setters
                prop.set("access", "readwrite" if writable else "read")
        for interface in tree.findall("interface"):
            for name, args in _STANDARD_SIGNALS.get(interface.get("name"), ()):
                signal = ElementTree.SubElement(interface, "signal", {"name": name})
                for arg_name, arg_type in args:
                    ElementTree.SubElement(signal, "arg", {"name": arg_name, "type": arg_type})
        return ElementTree.tostring(tree, encoding="unicode")

    introspect.__name__ = "Introspect"
    introspect._dbus_is_method = True
    introspect._dbus_async_callbacks = None
    introspect._dbus_interface = INTROSPECTABLE
    introspect._dbus_in_signature = ""
    introspect._dbus_out_signature = "s"
    introspect._dbus_sender_keyword = None
    introspect._dbus_path_keyword = "object_path"
    introspect._dbus_rel_path_keyword = None
    introspect._dbus_destination_keyword = None
    introspect._dbus_message_keyword = None
    introspect._dbus_connection_keyword = "connection"
    introspect._dbus_args = []
    introspect._dbus_get_args_options = {"byte_arrays": False}
    obj.methods.setdefault(INTROSPECTABLE, {})["Introspect"] = ("", "s", "", introspect)


def current() -> Bluetoothd:
    """The running bluetoothd incarnation."""
    bluetoothd = RUNTIME.bluetoothd
    if bluetoothd is None:
        raise RuntimeError("bluetoothd is not running")
    return bluetoothd
