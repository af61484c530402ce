#!/usr/bin/env python3
"""The load and the invariant checks behind scripts/soak (standard library only).

Many clients at once against a running storesvc and devicesvc: writers making durable 1-object and
4-object saves, fetchers, subscribers (which now and then resubscribe with `since`), and one chain
client per simulated device (every other chain with record: true). Every CHECK seconds:
  - every save acknowledged since the last check is still there (store.get of its ids);
  - each fetcher's txns never go back;
  - each subscriber's events are exactly the history's transactions after its `since` (no gap, no
    duplicate, in order);
  - no chain failed, no client hung;
  - the services' RSS and open descriptors are sampled, and their metrics (bus.metrics, parsed as Prometheus
    text): storesvc's history size, WAL size, commit latency (mean over the interval), fsync p99 bucket, and each
    service's process_resident_memory_bytes / process_open_fds, which must agree with /proc.
With METRICS_CSV set, every sample is also written there as a CSV row (for docs/notes).
At the end: RSS and descriptors must have levelled off (the peak RSS of the last third of the run may
not exceed the middle third's by more than 10% or 4 MiB, whichever is more; descriptors by more than 16).
Run it for several minutes: in a short run, warming up (SQLite's page cache) looks like growth. Prints a table per check and a
summary; exits 1 on any violation.

    soak_driver.py STORE_SOCK DEVICE_SOCK MINUTES STORE_PID DEVICE_PID
"""
import base64, json, os, socket, struct, sys, threading, time

WRITERS, FETCHERS, SUBSCRIBERS, CHECK_SECONDS = 4, 2, 2, 10
BATCH = 4  # objects per multi-object save: one Device and three Readings
stop = threading.Event()
lock = threading.Lock()
violations = []
counters = {"saves": 0, "objects": 0, "fetches": 0, "events": 0, "resubscribes": 0, "chains": 0, "recorded": 0}
pending_acks = []  # ids of saves acknowledged since the last check


def violation(text):
    with lock:
        violations.append(text)
    print(f"soak: VIOLATION: {text}", flush=True)


def count(key, n=1):
    with lock:
        counters[key] += n


class Connection:
    """A blocking client: requests answered in order, events kept for the caller."""

    def __init__(self, path, name):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(120)  # a guard against a hung service, not a timing check
        self.sock.connect(path)
        self.next_id = 1
        self.events = []
        self.call("bus.hello", {"protocol": 1, "client": name})

    def send(self, method, params):
        request_id = self.next_id
        self.next_id += 1
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        self.sock.sendall(struct.pack(">I", len(body)) + body)
        return request_id

    def receive(self):
        header = self._exactly(4)
        return json.loads(self._exactly(struct.unpack(">I", header)[0]))

    def _exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the service closed the connection")
            data += chunk
        return data

    def call(self, method, params):
        request_id = self.send(method, params)
        while True:
            message = self.receive()
            if message.get("id") == request_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]
            if "method" in message:
                self.events.append(message)


def guarded(name, body):
    def run():
        try:
            body()
        except Exception as error:  # a client that dies while the run goes on is a violation
            if not stop.is_set():
                violation(f"{name} stopped: {error!r}")
    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread


def writer(store, index):
    c = Connection(store, f"soak-writer-{index}")
    n = 0
    while not stop.is_set():
        n += 1
        tag = f"soak-{index}-{n}"
        if n % 2:
            save = {"insert": [{"entity": "Device", "ref": "d", "values": {"address": tag}}]}
        else:
            reading = {"entity": "Reading", "values": {"characteristic": "2a19", "value": "AQ==",
                                                       "time": "2026-01-01T00:00:00.000Z", "chain": tag,
                                                       "device": "d"}}
            save = {"insert": [{"entity": "Device", "ref": "d", "values": {"address": tag}}] + [reading] * (BATCH - 1)}
        save["durability"] = "disk"
        result = c.call("store.save", save)
        ids = list(result["ids"].values())
        if len(ids) != len(save["insert"]):
            violation(f"save {tag} answered ids {ids}")
        with lock:
            pending_acks.append((tag, ids))
        count("saves")
        count("objects", len(ids))


def fetcher(store, index):
    c = Connection(store, f"soak-fetcher-{index}")
    last = 0
    while not stop.is_set():
        query = ({"entity": "Reading", "where": "chain BEGINSWITH 'soak-'", "result": "count"} if index % 2 else
                 {"entity": "Device", "sort": [{"key": "address", "ascending": False}], "limit": 20})
        result = c.call("store.fetch", query)
        if result["txn"] < last:
            violation(f"fetcher {index}: txn went back from {last} to {result['txn']}")
        last = result["txn"]
        count("fetches")
        time.sleep(0.01)


class Subscriber:
    """Subscribes to everything; every 30 s unsubscribes and resubscribes with since = the last txn seen."""

    def __init__(self, store, index):
        self.store, self.index = store, index
        self.lock = threading.Lock()
        self.since = None  # the since of the current stretch
        self.seen = []  # txns received in this stretch

    def run(self):
        c = Connection(self.store, f"soak-subscriber-{self.index}")
        head = c.call("store.fetch", {"entity": "Device", "result": "count"})["txn"]
        while not stop.is_set():
            with self.lock:
                self.since, self.seen = head, []
            sub = c.call("store.subscribe", {"since": head})["subscription"]
            started = time.monotonic()
            pending = c.events
            c.events = []
            while not stop.is_set() and time.monotonic() - started < 30:
                message = pending.pop(0) if pending else c.receive()
                if message.get("method") != "store.changed" or message["params"]["subscription"] != sub:
                    continue  # an event of the previous stretch's subscription
                txn = message["params"]["txn"]
                with self.lock:
                    if self.seen and txn <= self.seen[-1]:
                        violation(f"subscriber {self.index}: txn {txn} after {self.seen[-1]}")
                    self.seen.append(txn)
                count("events")
            c.call("store.unsubscribe", {"subscription": sub})
            with self.lock:
                head = self.seen[-1] if self.seen else self.since
            count("resubscribes")

    def take(self):
        """The stretch's since and the txns seen so far; starts a new stretch after the last one."""
        with self.lock:
            since, seen = self.since, list(self.seen)
            if seen:
                self.since, self.seen = seen[-1], []
            return since, seen


def chains(device, address, index):
    c = Connection(device, f"soak-chain-{index}")
    n = 0
    while not stop.is_set():
        n += 1
        steps = [{"op": "connect"}, {"op": "read", "characteristic": "2a19"},
                 {"op": "notify", "characteristic": "2a19", "count": 2}, {"op": "disconnect"}]
        record = n % 2 == 0
        try:
            result = c.call("device.run", {"address": address, "steps": steps, "record": record})
        except RuntimeError as error:
            violation(f"chain {n} on {address} failed: {error}")
            continue
        if len(result["results"]) != len(steps):
            violation(f"chain {result['chain']} answered {len(result['results'])} results")
        count("chains")
        if record:
            count("recorded")


def history_txns(c, since, until):
    txns, after = [], since
    while after < until:
        page = c.call("store.history", {"since": after})["transactions"]
        if not page:
            break
        txns += [t["txn"] for t in page if t["txn"] <= until]
        after = page[-1]["txn"]
    return txns


def metrics_sample(c):
    """bus.metrics of a connection's service as {sample name with labels: value} (the text format, parsed plainly:
    the tests parse it with prometheus_client)."""
    samples = {}
    for line in c.call("bus.metrics", {})["text"].splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def metric(samples, name, **labels):
    """The sample `name` whose labels include `labels` (service included or not)."""
    for key, value in samples.items():
        base, _, rest = key.partition("{")
        if base == name and all(f'{k}="{v}"' in rest for k, v in labels.items()):
            return value
    return None


def histogram_quantile(samples, name, q):
    """The upper bound of the bucket holding quantile q (a coarse p99)."""
    buckets = sorted((float(key.split('le="')[1].split('"')[0]), value) for key, value in samples.items()
                     if key.startswith(name + "_bucket{") and 'le="+Inf"' not in key)
    total = metric(samples, name + "_count") or 0
    for bound, count in buckets:
        if total and count >= q * total:
            return bound
    return float("inf")


def process_sample(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) // 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def check(checker, subscribers):
    with lock:
        acks, pending_acks[:] = list(pending_acks), []
    for start in range(0, len(acks), 200):
        chunk = acks[start:start + 200]
        ids = [i for _, group in chunk for i in group]
        result = checker.call("store.get", {"ids": ids})
        if result["missing"]:
            violation(f"acknowledged objects missing: {result['missing'][:10]}")
    for s in subscribers:
        since, seen = s.take()
        if since is None or not seen:
            continue
        expected = history_txns(checker, since, seen[-1])
        if expected != seen:
            violation(f"subscriber {s.index} since {since} saw {len(seen)} txns, the history has {len(expected)}")
    return len(acks)


def main():
    store, device, minutes, store_pid, device_pid = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
    deadline = time.monotonic() + minutes * 60
    lister = Connection(device, "soak-list")
    for _ in range(600):  # devicesvc answers 503 until it has found BlueZ on the bus
        try:
            addresses = [d["address"] for d in lister.call("device.list", {})["devices"]]
            break
        except RuntimeError:
            time.sleep(0.1)
    else:
        sys.exit("soak: devicesvc never found BlueZ")
    print(f"soak: {minutes:g} min; {WRITERS} writers, {FETCHERS} fetchers, {SUBSCRIBERS} subscribers, "
          f"{len(addresses)} chain clients ({', '.join(addresses)})", flush=True)
    subscribers = [Subscriber(store, i) for i in range(SUBSCRIBERS)]
    threads = [guarded(f"subscriber-{s.index}", s.run) for s in subscribers]
    time.sleep(0.5)
    threads += [guarded(f"writer-{i}", lambda i=i: writer(store, i)) for i in range(WRITERS)]
    threads += [guarded(f"fetcher-{i}", lambda i=i: fetcher(store, i)) for i in range(FETCHERS)]
    threads += [guarded(f"chains-{i}", lambda i=i, a=a: chains(device, a, i)) for i, a in enumerate(addresses)]
    checker = Connection(store, "soak-checker")
    device_metrics = Connection(device, "soak-metrics")
    samples = []
    csv = open(os.environ["METRICS_CSV"], "w") if os.environ.get("METRICS_CSV") else None
    if csv:
        csv.write("t,saves,chains,store_rss_mib,store_fds,history_txns,wal_mib,db_mib,commit_ms_mean,"
                  "fsync_p99_ms,device_rss_mib,device_fds,chains_running,metrics_ms\n")
    last_commits = None
    print(f"{'t(s)':>6} {'saves':>7} {'objects':>8} {'fetches':>8} {'events':>8} {'chains':>7} {'checked':>8} "
          f"{'store MiB':>9} {'fds':>4} {'device MiB':>10} {'fds':>4} {'history':>8} {'wal MiB':>7} "
          f"{'commit ms':>9} {'fsync p99':>9}", flush=True)
    begin = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(min(CHECK_SECONDS, max(0.0, deadline - time.monotonic())))
        checked = check(checker, subscribers)
        (store_rss, store_fds), (device_rss, device_fds) = process_sample(store_pid), process_sample(device_pid)
        scrape_started = time.monotonic()
        store_metrics, devices = metrics_sample(checker), metrics_sample(device_metrics)
        scrape_ms = (time.monotonic() - scrape_started) * 1000
        history = metric(store_metrics, "ctxbus_store_history_transactions") or 0
        wal = (metric(store_metrics, "ctxbus_store_file_bytes", file="wal") or 0) / 2**20
        database = (metric(store_metrics, "ctxbus_store_file_bytes", file="database") or 0) / 2**20
        commits = (metric(store_metrics, "ctxbus_store_commit_seconds_count") or 0,
                   metric(store_metrics, "ctxbus_store_commit_seconds_sum") or 0)
        commit_ms = ((commits[1] - last_commits[1]) / max(1, commits[0] - last_commits[0]) * 1000
                     if last_commits else commits[1] / max(1, commits[0]) * 1000)
        last_commits = commits
        fsync_p99 = histogram_quantile(store_metrics, "ctxbus_store_wal_fsync_seconds", 0.99) * 1000
        # The metrics' own process figures against /proc (sampled a moment apart: RSS within 8 MiB, fds within 8).
        for name, samples_of, rss, fds in (("storesvc", store_metrics, store_rss, store_fds),
                                           ("devicesvc", devices, device_rss, device_fds)):
            reported_rss = (metric(samples_of, "process_resident_memory_bytes") or 0) / 2**20
            reported_fds = metric(samples_of, "process_open_fds") or 0
            if abs(reported_rss - rss) > 8 or abs(reported_fds - fds) > 8:
                violation(f"{name}: metrics say {reported_rss:.0f} MiB, {reported_fds:.0f} fds; /proc {rss} MiB, {fds}")
        samples.append((store_rss, store_fds, device_rss, device_fds, history, wal))
        with lock:
            snapshot = dict(counters)
        elapsed = time.monotonic() - begin
        print(f"{elapsed:6.0f} {snapshot['saves']:7d} {snapshot['objects']:8d} "
              f"{snapshot['fetches']:8d} {snapshot['events']:8d} {snapshot['chains']:7d} {checked:8d} "
              f"{store_rss:9d} {store_fds:4d} {device_rss:10d} {device_fds:4d} {history:8.0f} {wal:7.1f} "
              f"{commit_ms:9.2f} {fsync_p99:9.2f}", flush=True)
        if csv:
            csv.write(f"{elapsed:.0f},{snapshot['saves']},{snapshot['chains']},{store_rss},{store_fds},{history:.0f},"
                      f"{wal:.1f},{database:.1f},{commit_ms:.2f},{fsync_p99:.2f},{device_rss},{device_fds},"
                      f"{metric(devices, 'ctxbus_device_chains_running') or 0:.0f},{scrape_ms:.1f}\n")
            csv.flush()
        dead = [t.name for t in threads if not t.is_alive()]
        if dead:
            violation(f"clients stopped: {dead}")
            break
    stop.set()
    check(checker, subscribers)
    if len(samples) >= 3:
        third = len(samples) // 3
        middle, last = samples[third:2 * third] or samples[:1], samples[2 * third:]
        for column, name in ((0, "storesvc RSS"), (2, "devicesvc RSS")):
            before, after = max(s[column] for s in middle), max(s[column] for s in last)
            if after - before > max(4, before * 0.10):
                violation(f"{name} still grows: {before} MiB in the middle third, {after} MiB in the last")
        for column, name in ((1, "storesvc descriptors"), (3, "devicesvc descriptors")):
            before, after = max(s[column] for s in middle), max(s[column] for s in last)
            if after > before + 16:
                violation(f"{name} still grow: {before} in the middle third, {after} in the last")
        # The history levels off at --history, the WAL at a few checkpoint thresholds.
        before, after = max(s[4] for s in middle), max(s[4] for s in last)
        print(f"  history       {before:.0f} txns (middle third's peak) -> {after:.0f} (last third's)", flush=True)
        before, after = max(s[5] for s in middle), max(s[5] for s in last)
        print(f"  WAL           {before:.1f} MiB (middle third's peak) -> {after:.1f} MiB (last third's)", flush=True)
    with lock:
        final = dict(counters)
    print("soak: summary", flush=True)
    for key in ("saves", "objects", "fetches", "events", "resubscribes", "chains", "recorded"):
        print(f"  {key:<13} {final[key]:>9}", flush=True)
    if samples:
        print(f"  storesvc RSS  {samples[0][0]} -> {samples[-1][0]} MiB (max {max(s[0] for s in samples)}), "
              f"fds {samples[0][1]} -> {samples[-1][1]}", flush=True)
        print(f"  devicesvc RSS {samples[0][2]} -> {samples[-1][2]} MiB (max {max(s[2] for s in samples)}), "
              f"fds {samples[0][3]} -> {samples[-1][3]}", flush=True)
    print(f"  violations    {len(violations):>9}", flush=True)
    for text in violations[:20]:
        print(f"    {text}", flush=True)
    os._exit(1 if violations else 0)


if __name__ == "__main__":
    main()
