#!/usr/bin/python3
"""Prints D-Bus messages serialised by real implementations, as hex, for Tests/devicesvcTests/DBusMessageWireTests.

Run with Debian's interpreter, which has python3-dbus and python3-gi: /usr/bin/python3 scripts/dbus-reference-messages.py

- libdbus (through python-dbus): python-dbus cannot serialise a message by itself, so a private connection is
  opened to a fake listener on a temporary Unix socket; the listener answers the SASL handshake and records every
  byte sent after BEGIN. libdbus writes native (little-endian) byte order and numbers serials from 1.
- GDBus (through python3-gi): Gio.DBusMessage.to_blob serialises directly and can write big-endian.
"""
import os
import socket
import tempfile
import threading

import dbus
import dbus.lowlevel as low
from gi.repository import Gio, GLib


def capture_libdbus(build):
    """Sends the messages made by build() over a real libdbus connection to a fake bus; returns the raw bytes."""
    directory = tempfile.mkdtemp()
    path = os.path.join(directory, "bus")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    received = bytearray()

    def serve():
        peer, _ = server.accept()
        buffered = b""
        while b"BEGIN\r\n" not in buffered:
            chunk = peer.recv(4096)
            if not chunk:
                return
            buffered += chunk
            while b"\r\n" in buffered and not buffered.lstrip(b"\0").startswith(b"BEGIN"):
                line, buffered = buffered.split(b"\r\n", 1)
                line = line.lstrip(b"\0")
                if line.startswith(b"AUTH"):
                    peer.sendall(b"OK 0123456789abcdef0123456789abcdef\r\n")
                elif line.startswith(b"NEGOTIATE_UNIX_FD"):
                    peer.sendall(b"ERROR\r\n")
        received.extend(buffered.split(b"BEGIN\r\n", 1)[1])
        while True:
            chunk = peer.recv(65536)
            if not chunk:
                break
            received.extend(chunk)

    thread = threading.Thread(target=serve)
    thread.start()
    connection = dbus.connection.Connection("unix:path=" + path)
    for message in build():
        connection.send_message(message)
    connection.flush()
    connection.close()
    thread.join()
    server.close()
    os.unlink(path)
    os.rmdir(directory)
    return bytes(received)


def libdbus_messages():
    call = low.MethodCallMessage("org.example.Service", "/org/example/Thing", "org.example.Thing", "Configure")
    call.append(
        dbus.Byte(7), True, dbus.Int16(-2), dbus.UInt16(65000), dbus.Int32(-100000), dbus.UInt32(4000000000),
        dbus.Int64(-5000000000), dbus.UInt64(18000000000000000000), 2.5, "héllo", dbus.ObjectPath("/a/b_c"),
        dbus.Signature("a{sv}"), signature="ybnqiuxtdsog")
    call.append(dbus.Array([], signature="x"), signature="ax")
    call.append(dbus.Array([dbus.Byte(1), dbus.Byte(2), dbus.Byte(3)], signature="y"), signature="ay")
    call.append({"Powered": True, "Alias": "kitchen", "Class": dbus.UInt32(0x1F00)}, signature="a{sv}")
    call.append((dbus.Int32(1), "one", [dbus.Double(1.5)]), signature="(isad)")
    call.append(dbus.Dictionary({}, signature="sv"), signature="a{sv}")
    yield call

    signal = low.SignalMessage("/org/bluez/hci0/dev_AA", "org.freedesktop.DBus.Properties", "PropertiesChanged")
    signal.set_sender(":1.5")
    signal.append("org.bluez.Device1", {"Connected": True, "RSSI": dbus.Int16(-60)}, dbus.Array(["Name"], "s"),
                  signature="sa{sv}as")
    yield signal

    error_call = low.MethodCallMessage(":1.7", "/", "org.example.Thing", "Fail")
    error_call.set_sender(":1.9")
    error_call.set_no_reply(True)
    yield error_call


def libdbus_replies(call):
    """Replies need the serial libdbus gave the call, so they are built after it was sent."""
    reply = low.MethodReturnMessage(call)
    reply.append(dbus.Array([dbus.ObjectPath("/x"), dbus.ObjectPath("/y")], signature="o"), signature="ao")
    error = low.ErrorMessage(call, "org.bluez.Error.Failed", "Operation failed")
    return [reply, error]


def libdbus_bytes():
    def build():
        messages = list(libdbus_messages())
        for message in messages:
            yield message
        for message in libdbus_replies(messages[2]):
            yield message
    return capture_libdbus(build)


def gdbus_big_endian():
    message = Gio.DBusMessage.new_method_call("org.bluez", "/org/bluez/hci0", "org.bluez.Adapter1", "SetDiscoveryFilter")
    message.set_body(GLib.Variant("(a{sv}qxas)", (
        {"Transport": GLib.Variant("s", "le"), "RSSI": GLib.Variant("n", -70), "UUIDs": GLib.Variant("as", ["180d"])},
        513, -2, [])))
    message.set_serial(0x01020304)
    message.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
    return bytes(message.to_blob(Gio.DBusCapabilityFlags.NONE))


def split_messages(data):
    """Splits a stream of little-endian messages at their declared lengths."""
    messages = []
    while data:
        fields_length = int.from_bytes(data[12:16], "little")
        header = 16 + fields_length
        header += (8 - header % 8) % 8
        total = header + int.from_bytes(data[4:8], "little")
        messages.append(data[:total])
        data = data[total:]
    return messages


if __name__ == "__main__":
    for index, message in enumerate(split_messages(libdbus_bytes())):
        print(f"libdbus message {index} ({len(message)} bytes):")
        print(message.hex())
    print("gdbus big-endian:")
    print(gdbus_big_endian().hex())
