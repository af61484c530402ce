#!/usr/bin/env python3
"""The demo behind scripts/run: runs BLE chains with "record": true on devicesvc and prints the readings
storesvc streams back as it commits them. Standard library only: any language that can open a Unix socket
and write length-prefixed JSON can be a ContextBus client.

    demo_client.py STORE_SOCKET DEVICE_SOCKET [--seconds N] [--rounds N] [--no-watch]

--seconds N / --rounds N end the demo after N seconds / N rounds over every device (0, the default: never).
--no-watch leaves printing the readings to another watcher (`ctxbus store watch Reading`).
Lines it prints: `demo: ...` for chains and the summary, `reading ...` for every reading committed."""

import argparse
import base64
import json
import socket
import struct
import sys
import threading
import time

_output = threading.Lock()


def say(line):
    """Prints one whole line: the chain loop and the watcher thread print concurrently."""
    with _output:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class Connection:
    """One connection to a ContextBus service: bus.hello, then calls; events go to on_event."""

    def __init__(self, path, name, on_event=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.next_id = 1
        self.on_event = on_event
        self.call("bus.hello", {"protocol": 1, "client": name})

    def send(self, message):
        body = json.dumps(message).encode()
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def receive(self):
        (length,) = struct.unpack(">I", self._read_exactly(4))
        return json.loads(self._read_exactly(length))

    def _read_exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the service closed the connection")
            data += chunk
        return data

    def call(self, method, params=None):
        """Sends a request and returns its result; events that arrive meanwhile go to on_event."""
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            reply = self.receive()
            if reply.get("id") == request_id:
                if "error" in reply:
                    raise RPCError(method, reply["error"])
                return reply["result"]
            if "method" in reply and self.on_event:
                self.on_event(reply)

    def close(self):
        self.sock.close()


class RPCError(Exception):
    def __init__(self, method, error):
        super().__init__(f"{method}: {error.get('code')} {error.get('message')}")
        self.code = error.get("code")


# What the decoded readings are called: devicesvc decodes the standard formats into Reading.number/unit.
NAMES = {"2a19": "battery", "2a6e": "temperature", "2a6f": "humidity", "2a37": "heart rate"}


def number_text(number, unit):
    """87 %, 72 bpm, 21.5 °C, 26.0 °C: whole percentages and rates as integers, other numbers with a decimal."""
    if float(number).is_integer() and unit in ("%", "bpm", None):
        return str(int(number))
    text = f"{number:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def describe(values, raw):
    """A reading as devicesvc decoded it (`battery 87 %`), else its bytes in hex."""
    characteristic = values.get("characteristic", "?")
    number, unit = values.get("number"), values.get("unit")
    if number is not None:
        short = characteristic.lower().split("-")[0][-4:]
        name = NAMES.get(short, characteristic)
        return f"{name} {number_text(number, unit)}" + (f" {unit}" if unit else "")
    return f"{characteristic} = {raw.hex()}"


def decoded(steps, result):
    """What the chain read, as devicesvc decoded it: `battery 87 %, temperature 21.5 °C: ` (empty when nothing)."""
    parts = []
    for entry in result.get("results", []):
        characteristic = steps[entry["step"]].get("characteristic", "?")
        numbers = [entry["number"]] if entry.get("number") is not None else entry.get("numbers") or []
        for number in numbers:
            if number is not None:
                parts.append(describe({"characteristic": characteristic, "number": number,
                                       "unit": entry.get("unit")}, b""))
    return ", ".join(parts) + ": " if parts else ""


def watch_readings(store_path, ready, counters):
    """Subscribes to Reading and prints each inserted reading with its device's name."""
    names = {}
    lookup = Connection(store_path, "demo-lookup")

    def device_name(device_id):
        if device_id and device_id not in names:
            objects = lookup.call("store.get", {"ids": [device_id]}).get("objects", [])
            values = objects[0]["values"] if objects else {}
            names[device_id] = f"{values.get('name') or '?'} {values.get('address', '')}".strip()
        return names.get(device_id, "?")

    watcher = Connection(store_path, "demo-watch")
    watcher.call("store.subscribe", {"entity": "Reading"})
    ready.set()
    while True:
        try:
            event = watcher.receive()
        except (ConnectionError, OSError):
            return
        if event.get("method") != "store.changed":
            continue
        params = event["params"]
        for obj in params.get("inserted", []):
            values = obj["values"]
            raw = base64.b64decode(values.get("value") or "")
            say(f"reading {obj['id']} txn {params['txn']}: {device_name(values.get('device'))}: "
                f"{describe(values, raw)}")
            with counters["lock"]:
                counters["printed"] += 1


def chain_for(device):
    """connect, read the battery, read or listen to the sensor the device has, disconnect."""
    services = [uuid.lower() for uuid in device.get("services", [])]
    steps = [{"op": "connect"}, {"op": "read", "characteristic": "2a19"}]
    if any(uuid.startswith("0000181a") for uuid in services):
        steps.append({"op": "read", "characteristic": "2a6e"})
    if any(uuid.startswith("0000180d") for uuid in services):
        steps.append({"op": "notify", "characteristic": "2a37", "count": 2, "timeoutMs": 5000})
    steps.append({"op": "disconnect"})
    return steps


def list_devices(devices, deadline):
    """device.list, retried while devicesvc answers 503 (BlueZ not on the bus yet, or its tree loading)."""
    while True:
        try:
            found = devices.call("device.list", {})["devices"]
            if found:
                return found
        except RPCError as error:
            if error.code != 503:
                raise
        if time.monotonic() > deadline:
            raise SystemExit("demo: devicesvc lists no device after 60 s (is BlueZ running?)")
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser(description="ContextBus demo: recorded BLE chains and the readings they store")
    parser.add_argument("store_socket")
    parser.add_argument("device_socket")
    parser.add_argument("--seconds", type=float, default=0, help="end after this long (0: never)")
    parser.add_argument("--rounds", type=int, default=0, help="end after this many rounds (0: never)")
    parser.add_argument("--no-watch", action="store_true", help="do not print readings (another watcher does)")
    args = parser.parse_args()

    counters = {"printed": 0, "recorded": 0, "lock": threading.Lock()}
    if not args.no_watch:
        ready = threading.Event()
        threading.Thread(target=watch_readings, args=(args.store_socket, ready, counters), daemon=True).start()
        if not ready.wait(60):
            raise SystemExit("demo: could not subscribe to storesvc")

    baseline = devices_reading_count(args.store_socket)  # readings stored before this demo (--keep-data)
    devices = Connection(args.device_socket, "demo")
    listed = list_devices(devices, time.monotonic() + 60)
    say("demo: devices " + ", ".join(f"{d['address']} ({d.get('name') or '?'})" for d in listed))
    start = time.monotonic()
    chains = rounds = 0
    while (args.rounds == 0 or rounds < args.rounds) and (args.seconds == 0 or time.monotonic() - start < args.seconds):
        for device in listed:
            steps = chain_for(device)
            try:
                result = devices.call("device.run", {"address": device["address"], "steps": steps, "record": True})
                chains += 1
                recorded = "recorded" if result.get("recorded") else f"NOT recorded: {result.get('recordError')}"
                operations = " ".join(step["op"] + (":" + step["characteristic"] if "characteristic" in step else "")
                                      for step in steps)
                say(f"demo: chain {result['chain']} on {device['address']}: {operations}: {decoded(steps, result)}"
                    f"{recorded}")
            except RPCError as error:
                say(f"demo: chain on {device['address']} failed: {error}")
        rounds += 1
        time.sleep(1)

    if not args.no_watch:
        # The last recordings are committed right after their chains answer: give the watcher a moment.
        count = devices_reading_count(args.store_socket) - baseline
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with counters["lock"]:
                if counters["printed"] >= count:
                    break
            time.sleep(0.1)
    with counters["lock"]:
        printed = counters["printed"]
    say(f"demo: done: {chains} chains in {rounds} rounds; {printed} readings printed as committed")
    devices.close()


def devices_reading_count(store_path):
    """How many Readings storesvc holds."""
    store = Connection(store_path, "demo-count")
    try:
        return store.call("store.fetch", {"entity": "Reading", "result": "count"})["count"]
    finally:
        store.close()


if __name__ == "__main__":
    main()
