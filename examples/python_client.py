#!/usr/bin/env python3
"""A ContextBus client in Python, standard library only: the proof that any language that can open
a Unix socket and write length-prefixed JSON-RPC can use the store service.

    python3 examples/python_client.py [--socket PATH]              save a Device, then print changes
    python3 examples/python_client.py --socket PATH --self-test    exit 0 once our own save comes back

It connects to storesvc, says bus.hello, subscribes to Device changes (store.subscribe), saves a
Device (store.save) and prints every store.changed event it receives, until Ctrl-C. With
--self-test, the save is made on a second connection, and the program exits 0 as soon as the
subscription has delivered that save's transaction (1 on an error, 2 after --timeout seconds).

The socket defaults to $CTXBUS_STORE_SOCKET, else $CTXBUS_RUNTIME_DIR/store.sock, else
$XDG_RUNTIME_DIR/ctxbus/store.sock, else ./run/store.sock (as storesvc and ctxbus default).

Wire format (docs/protocol.md): each message is a 4-byte big-endian length, then that many bytes of
UTF-8 JSON holding one JSON-RPC 2.0 object; events are messages without an "id".
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time


class BusConnection:
    """One connection to a ContextBus service: requests answered by id, events queued in order."""

    def __init__(self, path, client_name):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.next_id = 1
        self.buffer = b""
        self.events = []
        self.hello = self.call("bus.hello", {"protocol": 1, "client": client_name})

    def close(self):
        self.sock.close()

    def send(self, message):
        body = json.dumps(message).encode("utf-8")
        self.sock.sendall(struct.pack(">I", len(body)) + body)

    def receive(self, timeout=None):
        """The next message, or None when `timeout` seconds pass without one."""
        while True:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4:4 + length], self.buffer[4 + length:]
                    return json.loads(body.decode("utf-8"))
            if timeout is not None:
                ready, _, _ = select.select([self.sock], [], [], timeout)
                if not ready:
                    return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the service closed the connection")
            self.buffer += chunk

    def call(self, method, params=None):
        """Sends a request and waits for its answer; events that arrive meanwhile are queued."""
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            answer = self.receive()
            if "id" not in answer:
                self.events.append(answer)
            elif answer["id"] == request_id:
                if "error" in answer:
                    error = answer["error"]
                    raise RuntimeError(f"{method} failed: error {error['code']}: {error['message']}")
                return answer["result"]

    def next_event(self, timeout=None):
        """The next event (queued first), or None after `timeout` seconds."""
        if self.events:
            return self.events.pop(0)
        return self.receive(timeout)


def default_socket():
    if os.environ.get("CTXBUS_STORE_SOCKET"):
        return os.environ["CTXBUS_STORE_SOCKET"]
    if os.environ.get("CTXBUS_RUNTIME_DIR"):
        return os.path.join(os.environ["CTXBUS_RUNTIME_DIR"], "store.sock")
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "ctxbus", "store.sock")
    return "./run/store.sock"


def describe(event):
    params = event["params"]
    lines = []
    for obj in params.get("inserted", []):
        lines.append(f"txn {params['txn']}: inserted {obj['id']} v{obj['version']} {json.dumps(obj['values'], sort_keys=True)}")
    for obj in params.get("updated", []):
        lines.append(f"txn {params['txn']}: updated {obj['id']} v{obj['version']} {json.dumps(obj['values'], sort_keys=True)}")
    for object_id in params.get("deleted", []):
        lines.append(f"txn {params['txn']}: deleted {object_id}")
    return lines


def main():
    parser = argparse.ArgumentParser(description="A standard-library Python client of storesvc.")
    parser.add_argument("--socket", default=default_socket(), help="storesvc's socket")
    parser.add_argument("--self-test", action="store_true",
                        help="save on a second connection and exit 0 once the change is received")
    parser.add_argument("--timeout", type=float, default=60.0, help="self-test: give up after this many seconds")
    options = parser.parse_args()

    try:
        watcher = BusConnection(options.socket, "python-client")
    except OSError as error:
        print(f"python_client: cannot connect to storesvc at {options.socket}: {error}", file=sys.stderr)
        return 1
    print(f"connected to {watcher.hello['server']} {watcher.hello['version']} at {options.socket}", flush=True)
    subscription = watcher.call("store.subscribe", {"entity": "Device"})
    print(f"subscribed (subscription {subscription['subscription']}, after txn {subscription['txn']})", flush=True)

    saver = BusConnection(options.socket, "python-client-saver") if options.self_test else watcher
    address = "AA:BB:CC:%02X:%02X:%02X" % (os.getpid() >> 16 & 0xFF, os.getpid() >> 8 & 0xFF, os.getpid() & 0xFF)
    saved = saver.call("store.save", {
        "insert": [{"entity": "Device", "ref": "d1", "values": {"address": address, "name": "python"}}],
        "author": "python-client",
    })
    print(f"saved {saved['ids']['d1']} in txn {saved['txn']}", flush=True)

    deadline = time.monotonic() + options.timeout
    try:
        while True:
            timeout = None if not options.self_test else max(0.0, deadline - time.monotonic())
            event = watcher.next_event(timeout)
            if event is None:
                print(f"python_client: no change for txn {saved['txn']} within {options.timeout} s", file=sys.stderr)
                return 2
            if event.get("method") != "store.changed":
                continue
            for line in describe(event):
                print(line, flush=True)
            params = event["params"]
            if options.self_test and params["txn"] == saved["txn"]:
                ours = [obj for obj in params.get("inserted", []) if obj["id"] == saved["ids"]["d1"]]
                if ours and ours[0]["values"]["address"] == address:
                    print("self-test passed: the subscription delivered our own save", flush=True)
                    return 0
                print("python_client: the change of our save does not hold our object", file=sys.stderr)
                return 1
    except KeyboardInterrupt:
        return 0
    except (ConnectionError, RuntimeError) as error:
        print(f"python_client: {error}", file=sys.stderr)
        return 1
    finally:
        watcher.close()
        if saver is not watcher:
            saver.close()


if __name__ == "__main__":
    sys.exit(main())
