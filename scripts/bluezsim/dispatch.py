"""Exports BlueZ methods on dbusmock objects so that every call is logged, checked for injected faults and
answered asynchronously (which is what lets a call be delayed, or hang forever).

A method implementation is `impl(call, *args)`; it returns the reply value (or None for no reply value),
raises `BluezError`, or returns `PENDING` after arranging to call `call.reply(...)` / `call.fail(...)` later.
"""

from __future__ import annotations

import sys
import traceback

import dbus
import dbus.exceptions

from bluezsim.runtime import RUNTIME

PENDING = object()

ERROR = "org.bluez.Error."


class BluezError(Exception):
    """A D-Bus error reply: its name and message."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message

    def as_dbus(self) -> dbus.exceptions.DBusException:
        """The dbus-python exception that makes this error reply."""
        return dbus.exceptions.DBusException(self.message, name=self.name)


def failed(message: str) -> BluezError:
    """org.bluez.Error.Failed with a message, as btd_error_failed() makes it."""
    return BluezError(ERROR + "Failed", message)


def in_progress(message: str = "In Progress") -> BluezError:
    """org.bluez.Error.InProgress ("In Progress", or "Operation already in progress" for busy)."""
    return BluezError(ERROR + "InProgress", message)


def not_supported() -> BluezError:
    """org.bluez.Error.NotSupported as btd_error_not_supported() makes it."""
    return BluezError(ERROR + "NotSupported", "Operation is not supported")


def not_permitted(message: str) -> BluezError:
    """org.bluez.Error.NotPermitted with a message."""
    return BluezError(ERROR + "NotPermitted", message)


def invalid_args(message: str = "Invalid arguments in method call") -> BluezError:
    """org.bluez.Error.InvalidArguments."""
    return BluezError(ERROR + "InvalidArguments", message)


def not_ready() -> BluezError:
    """org.bluez.Error.NotReady as btd_error_not_ready() makes it (adapter not powered)."""
    return BluezError(ERROR + "NotReady", "Resource Not Ready")


def not_connected() -> BluezError:
    """org.bluez.Error.NotConnected as btd_error_not_connected() makes it."""
    return BluezError(ERROR + "NotConnected", "Not Connected")


def does_not_exist() -> BluezError:
    """org.bluez.Error.DoesNotExist as btd_error_does_not_exist() makes it."""
    return BluezError(ERROR + "DoesNotExist", "Does Not Exist")


def summarize(args) -> str:
    """A short, stable text form of D-Bus arguments for the call log: bytes as 0x-hex, dicts as {k: v} by key."""

    def one(value) -> str:
        if isinstance(value, (bytes, bytearray)):
            return "0x" + bytes(value).hex()
        if isinstance(value, dbus.Boolean):
            return "true" if value else "false"
        if isinstance(value, dict):  # by key, so that the text does not depend on the sender's order
            return "{" + ", ".join(f"{key}: {one(value[key])}" for key in sorted(value, key=str)) + "}"
        if isinstance(value, (list, tuple)):
            if value and all(isinstance(item, dbus.Byte) for item in value):
                return "0x" + bytes(int(item) for item in value).hex()
            return "[" + ", ".join(one(item) for item in value) + "]"
        if isinstance(value, int):
            return str(int(value))
        return str(value)

    return ", ".join(one(arg) for arg in args)


class Call:
    """One incoming method call: who sent it, where it went, and the way to answer it exactly once."""

    def __init__(self, obj, interface, method, args, sender, reply_cb, error_cb, record) -> None:
        self.obj = obj
        self.path = obj.path
        self.interface = interface
        self.method = method
        self.args = args
        self.sender = sender
        self._reply_cb = reply_cb
        self._error_cb = error_cb
        self.record = record
        self.answered = False

    def reply(self, *values) -> None:
        """Sends the method return (once; later answers are ignored)."""
        if self.answered:
            return
        self.answered = True
        self.record.outcome = "ok"
        try:
            self._reply_cb(*values)
        except Exception:  # the caller's connection may be gone (bluetoothd stopped)
            pass

    def fail(self, error: BluezError) -> None:
        """Sends an error reply (once; later answers are ignored)."""
        if self.answered:
            return
        self.answered = True
        self.record.outcome = error.name
        try:
            self._error_cb(error.as_dbus())
        except Exception:
            pass


def gatt_uuid(obj) -> str | None:
    """The UUID of a GATT characteristic or descriptor object, for ADDRESS/UUID fault targets."""
    for interface in ("org.bluez.GattCharacteristic1", "org.bluez.GattDescriptor1", "org.bluez.GattService1"):
        props = obj.props.get(interface)
        if props is not None and "UUID" in props:
            return str(props["UUID"])
    return None


def run(impl, call: Call, out_sig: str) -> None:
    """Runs an implementation and turns its result or exception into the reply."""
    try:
        result = impl(call, *call.args)
    except BluezError as error:
        call.fail(error)
        return
    except dbus.exceptions.DBusException as error:
        call.fail(BluezError(error.get_dbus_name() or ERROR + "Failed", error.get_dbus_message() or ""))
        return
    except Exception as error:  # a simulator bug: answer and make it visible
        traceback.print_exc(file=sys.stderr)
        call.fail(failed(f"bluez-sim internal error: {error}"))
        return
    if result is PENDING:
        return
    if out_sig == "":
        call.reply()
    else:
        call.reply(result)


def export(obj, interface: str, method: str, in_sig: str, out_sig: str, impl) -> None:
    """Puts `impl` on `obj` as D-Bus method `interface.method`, replacing any method of that name."""

    def handler(self, *args, _bz_reply, _bz_error, _bz_sender, _bz_message):
        record = RUNTIME.record(self.path, interface, method, summarize(args), _bz_sender or "")
        call = Call(self, interface, method, list(args), _bz_sender, _bz_reply, _bz_error, record)
        signature = _bz_message.get_signature() or ""
        if signature != in_sig:
            call.fail(
                BluezError(
                    "org.freedesktop.DBus.Error.UnknownMethod",
                    f'Method "{method}" with signature "{signature}" on interface "{interface}" doesn\'t exist',
                )
            )
            return
        apply_faults(call, lambda: run(impl, call, out_sig))

    handler.__name__ = method
    handler._dbus_is_method = True
    handler._dbus_async_callbacks = ("_bz_reply", "_bz_error")
    handler._dbus_interface = interface
    handler._dbus_in_signature = in_sig
    handler._dbus_out_signature = out_sig
    handler._dbus_sender_keyword = "_bz_sender"
    handler._dbus_path_keyword = None
    handler._dbus_rel_path_keyword = None
    handler._dbus_destination_keyword = None
    handler._dbus_message_keyword = "_bz_message"
    handler._dbus_connection_keyword = None
    handler._dbus_args = [f"arg{index}" for index in range(len(dbus.Signature(in_sig)))]
    handler._dbus_get_args_options = {"byte_arrays": True}
    obj.methods.setdefault(interface, {})[method] = (in_sig, out_sig, "", handler)


def apply_faults(call: Call, proceed) -> None:
    """Applies the first matching delay, then the first matching fail/hang fault, else runs `proceed`."""
    uuid = gatt_uuid(call.obj)
    delay = RUNTIME.take(("delay",), call.path, call.method, uuid)
    terminal = RUNTIME.take(("fail", "hang"), call.path, call.method, uuid)

    def go() -> None:
        if terminal is None:
            proceed()
        elif terminal.kind == "fail":
            call.fail(BluezError(terminal.error, terminal.message))
        else:
            call.record.outcome = "hung"
            bluetoothd = RUNTIME.bluetoothd
            if bluetoothd is not None:
                bluetoothd.hung_calls.append(call)

    if delay is not None and delay.delay_ms > 0 and RUNTIME.bluetoothd is not None:
        RUNTIME.bluetoothd.after(delay.delay_ms, go)
    else:
        go()
