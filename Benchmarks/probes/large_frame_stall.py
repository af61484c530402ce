#!/usr/bin/env python3
# Usage: Benchmarks/probes/large_frame_stall.py PATH/TO/storesvc [MiB]  (a release build: swift build -c release --product storesvc)
# Loop stall probe: while one connection sends a large bus.ping frame, other connections ping every ms.
import json, os, socket, struct, subprocess, sys, tempfile, threading, time
binary = sys.argv[1]; size_mb = float(sys.argv[2]) if len(sys.argv) > 2 else 16
d = tempfile.mkdtemp(); sock = d + "/s.sock"
p = subprocess.Popen([binary, "--socket", sock, "--database", d + "/db.sqlite"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(500):
        if os.path.exists(sock): break
        time.sleep(0.01)
    def conn():
        c = socket.socket(socket.AF_UNIX); c.connect(sock)
        call(c, {"jsonrpc": "2.0", "id": 0, "method": "bus.hello", "params": {"protocol": 1, "client": "probe"}})
        return c
    def recvn(c, n):
        b = b""
        while len(b) < n:
            x = c.recv(n - len(b))
            if not x: raise EOFError
            b += x
        return b
    def call(c, msg):
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        c.sendall(struct.pack(">I", len(data)) + data)
        n = struct.unpack(">I", recvn(c, 4))[0]
        return recvn(c, n)
    pingers = [conn() for _ in range(4)]
    stop = threading.Event(); worst = [0.0] * 4; counts = [0] * 4; log = [[] for _ in range(4)]
    def pinger(i):
        c = pingers[i]
        while not stop.is_set():
            t = time.perf_counter(); call(c, {"jsonrpc": "2.0", "id": 1, "method": "bus.ping"})
            dt = time.perf_counter() - t; worst[i] = max(worst[i], dt); counts[i] += 1; log[i].append((t, dt))
            time.sleep(0.001)
    threads = [threading.Thread(target=pinger, args=(i,)) for i in range(4)]
    for t in threads: t.start()
    time.sleep(0.3)
    base = list(worst); worst[:] = [0.0] * 4
    big = conn()
    pad = "x" * int(size_mb * 1024 * 1024 - 100)
    payload = ('{"jsonrpc":"2.0","id":2,"method":"bus.ping","params":{"pad":"%s"}}' % pad).encode()
    t = time.perf_counter(); call(big, payload); bigrt = time.perf_counter() - t
    time.sleep(0.2); stop.set()
    for th in threads: th.join()
    start, end = t, t + bigrt
    per = []
    for i in range(4):
        during = [dt for (s0, dt) in log[i] if s0 + dt >= start and s0 <= end]
        per.append("%d pings, worst %.1f ms" % (len(during), max(during) * 1e3 if during else 0))
    print("  during the large frame, per connection: " + "; ".join(per))
    print("frame %.1f MiB: its round trip %.1f ms; other connections' worst ping %.1f ms (before it: %.2f ms); pings %d" % (
        len(payload) / 1048576, bigrt * 1e3, max(worst) * 1e3, max(base) * 1e3, sum(counts)))
finally:
    p.terminate(); p.wait()
