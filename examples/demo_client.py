#!/usr/bin/env python3
"""The demo behind scripts/run: runs BLE chains with record: true on devicesvc and prints the
readings storesvc streams back. Standard library only: any language that can open a Unix socket
and write length-prefixed JSON can be a ContextBus client."""
import base64, json, os, socket, struct, sys, threading, time

def connect(path, name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    c = {"sock": s, "next": 1}
    reply = call(c, "bus.hello", {"protocol": 1, "client": name})
    return c

def send(c, message):
    body = json.dumps(message).encode()
    c["sock"].sendall(struct.pack(">I", len(body)) + body)

def receive(c):
    header = read_exactly(c["sock"], 4)
    return json.loads(read_exactly(c["sock"], struct.unpack(">I", header)[0]))

def read_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("service closed the connection")
        data += chunk
    return data

def call(c, method, params):
    request_id = c["next"]; c["next"] += 1
    send(c, {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    while True:
        message = receive(c)
        if message.get("id") == request_id:
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error']}")
            return message["result"]

def watch_readings(store_path, stop):
    c = connect(store_path, "demo-watch")
    call(c, "store.subscribe", {"entity": "Reading"})
    while not stop.is_set():
        event = receive(c)
        for obj in event.get("params", {}).get("inserted", []):
            v = obj["values"]
            raw = base64.b64decode(v.get("value") or "")
            print(f"  store.changed txn {event['params']['txn']}: {obj['id']} {v['characteristic']} = "
                  f"{raw.hex()} ({int.from_bytes(raw, 'little') if raw else '-'})", flush=True)

def main():
    store_path, device_path = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    stop = threading.Event()
    threading.Thread(target=watch_readings, args=(store_path, stop), daemon=True).start()
    devices = connect(device_path, "demo")
    addresses = [d["address"] for d in call(devices, "device.list", {})["devices"]]
    print(f"demo: devices {', '.join(addresses)}", flush=True)
    n = 0
    while rounds == 0 or n < rounds:
        for address in addresses:
            steps = [{"op": "connect"}, {"op": "read", "characteristic": "2a19"}, {"op": "disconnect"}]
            try:
                result = call(devices, "device.run", {"address": address, "steps": steps, "record": True})
                print(f"demo: chain {result['chain']} on {address}: battery "
                      f"{base64.b64decode(result['results'][1]['value']).hex()}", flush=True)
            except RuntimeError as error:
                print(f"demo: chain on {address} failed: {error}", flush=True)
        n += 1
        time.sleep(1)
    time.sleep(0.5)
    stop.set()

if __name__ == "__main__":
    main()
