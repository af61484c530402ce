"""Builds one bluetoothd incarnation on a dbusmock root object: the stock `bluez5` template's manager and
adapter objects, then our adapter behaviour, devices and GATT databases on top.
"""

from __future__ import annotations

import dbus
from dbusmock import mockobject

from bluezsim.adapter import Adapter
from bluezsim.bluetoothd import Bluetoothd, export_properties
from bluezsim.device import Device
from bluezsim.dispatch import export
from bluezsim.runtime import RUNTIME
from bluezsim.world import world_from_parameters

DEFAULT_ADAPTER_ADDRESS = "00:1A:7D:DA:71:0A"


def _wrap_stock_methods(obj) -> None:
    """Routes the stock template's methods through our dispatcher so they are logged and fault-injectable."""
    for interface, methods in list(obj.methods.items()):
        if interface == mockobject.MOCK_IFACE:
            continue
        for name, (in_sig, out_sig, _code, function) in list(methods.items()):
            if getattr(function, "_dbus_async_callbacks", None) == ("_bz_reply", "_bz_error"):
                continue

            def impl(call, *args, function=function, obj=obj):
                return function(obj, *args)

            export(obj, interface, name, in_sig, out_sig, impl)


def build(mock, parameters: dict) -> Bluetoothd:
    """Populates `mock` (the object at / owning org.bluez) and returns the running Bluetoothd."""
    parameters = dict(parameters or {})
    # dbusmock registers its main object only after the template's load() returns, but the stock template
    # looks "/" up while loading: register it ourselves.
    mockobject.objects["/"] = mock
    bluez5 = mockobject.load_module("bluez5")
    bluez5.load(mock, {})
    bluetoothd = Bluetoothd(mock, parameters)
    RUNTIME.bluetoothd = bluetoothd
    adapter_path = bluez5.AddAdapter(mock, "hci0", "bluez-sim")
    for path in ("/org/bluez", adapter_path):
        obj = mockobject.objects[path]
        _wrap_stock_methods(obj)
        export_properties(bluetoothd, obj)
    bluetoothd.export_object_manager()
    world = world_from_parameters(parameters)
    address = str(parameters.get("adapter_address", DEFAULT_ADAPTER_ADDRESS))
    adapter = Adapter(bluetoothd, mockobject.objects[adapter_path], world, address)
    bluetoothd.adapter = adapter
    for spec in world:
        if spec.cached:
            Device(bluetoothd, adapter, spec, with_gatt=True, paired=spec.paired, rssi=None)
    if not parameters.get("powered", True):
        adapter.obj.props["org.bluez.Adapter1"]["Powered"] = dbus.Boolean(False)
    return bluetoothd
