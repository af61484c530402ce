"""Process-wide state of the simulator that outlives a bluetoothd restart: timings, faults and the call log.

Everything runs on the one GLib main loop thread, so nothing here needs a lock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from bluezsim.world import full_uuid, is_address

DEFAULT_TIMINGS = {
    # Delay from Connect to Connected=true.
    "connect_ms": 10,
    # Delay from Connected=true to ServicesResolved=true (and the Connect reply).
    "resolve_ms": 10,
    # Delay from Disconnect to Connected=false (and the Disconnect reply).
    "disconnect_ms": 5,
    # Delay of Pair once connected.
    "pair_ms": 10,
    # Delay of a GATT read or write request (write commands always reply at once).
    "gatt_ms": 0,
    # Period of value changes on a notifying battery/temperature/heart-rate characteristic.
    "notify_ms": 100,
    # Delay between StartDiscovery and the first device found; the next ones follow at the same spacing.
    "discovery_ms": 20,
    # Period of RSSI updates for found devices while discovering.
    "rssi_ms": 500,
}


@dataclass
class Fault:
    """One injected misbehaviour.

    kind: "fail" (reply `error`/`message`), "hang" (never reply), "delay" (`delay_ms` before the real
    behaviour), "drop-after-connect" (link loss `delay_ms` after services resolve), "drop-during-notify"
    (link loss after `after_notifications` notifications), "never-resolve" (Connected but never
    ServicesResolved), "drop-randomly" (each link is lost after a random time, exponential with mean `delay_ms`).
    `remaining` < 0 means until cleared.
    """

    id: int
    kind: str
    target: str
    method: str
    remaining: int
    error: str = ""
    message: str = ""
    delay_ms: int = 0
    after_notifications: int = 0

    def matches(self, path: str, method: str, uuid: str | None) -> bool:
        """True if this fault applies to a call of `method` on the object at `path` (with GATT `uuid`)."""
        if self.remaining == 0:
            return False
        if self.method not in ("", "*") and self.method != method:
            return False
        return target_matches(self.target, path, uuid)

    def consume(self) -> None:
        """Uses up one occurrence of a counted fault."""
        if self.remaining > 0:
            self.remaining -= 1

    def detail(self) -> str:
        """A one-line human description of what the fault does."""
        if self.kind == "fail":
            return f"{self.error}: {self.message}"
        if self.kind in ("delay", "drop-after-connect"):
            return f"{self.delay_ms} ms"
        if self.kind == "drop-randomly":
            return f"mean {self.delay_ms} ms"
        if self.kind == "drop-during-notify":
            return f"after {self.after_notifications} notifications"
        return ""


def target_matches(target: str, path: str, uuid: str | None) -> bool:
    """Whether a fault target names the object at `path`.

    Targets: "" or "*" (everything); an address "AA:BB:CC:DD:EE:01" (the device and its GATT objects);
    "ADDRESS/UUID" (the GATT characteristics or descriptors with that UUID on that device); an object path
    (that object and everything below it).
    """
    if target in ("", "*"):
        return True
    if target.startswith("/"):
        return path == target or path.startswith(target.rstrip("/") + "/")
    address, _, wanted_uuid = target.partition("/")
    if not is_address(address):
        return False
    segment = "/dev_" + address.upper().replace(":", "_")
    if not (path.endswith(segment) or (segment + "/") in path):
        return False
    if not wanted_uuid:
        return True
    return uuid is not None and uuid == full_uuid(wanted_uuid)


def validate_target(target: str) -> None:
    """Raises ValueError for a target none of the forms accept."""
    if target in ("", "*") or target.startswith("/"):
        return
    address, _, uuid = target.partition("/")
    if not is_address(address):
        raise ValueError(f"target must be '*', an object path, ADDRESS or ADDRESS/UUID, not {target!r}")
    if uuid:
        full_uuid(uuid)


@dataclass
class CallRecord:
    """One BlueZ method call as it arrived, and how it ended so far ("ok", an error name, "pending")."""

    time: float
    path: str
    interface: str
    method: str
    args: str
    sender: str
    outcome: str = "pending"


@dataclass
class Runtime:
    """Timings, faults and the call log shared by bluetoothd incarnations and the control interface."""

    timings: dict = field(default_factory=lambda: dict(DEFAULT_TIMINGS))
    faults: list = field(default_factory=list)
    calls: list = field(default_factory=list)
    next_fault_id: int = 1
    bluetoothd: object = None

    def add_fault(self, **fields) -> Fault:
        """Adds a fault and returns it with its id."""
        validate_target(fields["target"])
        fault = Fault(id=self.next_fault_id, **fields)
        self.next_fault_id += 1
        self.faults.append(fault)
        return fault

    def take(self, kinds: tuple, path: str, method: str, uuid: str | None) -> Fault | None:
        """Finds the first live fault of one of `kinds` for this call, uses up one occurrence and returns it."""
        for fault in self.faults:
            if fault.kind in kinds and fault.matches(path, method, uuid):
                fault.consume()
                return fault
        return None

    def clear_fault(self, fault_id: int) -> bool:
        """Removes one fault; False if there was none with that id."""
        before = len(self.faults)
        self.faults = [fault for fault in self.faults if fault.id != fault_id]
        return len(self.faults) != before

    def reset_faults(self) -> None:
        """Removes every fault."""
        self.faults = []

    def record(self, path: str, interface: str, method: str, args: str, sender: str) -> CallRecord:
        """Appends a call to the log."""
        entry = CallRecord(time.time(), path, interface, method, args, sender)
        self.calls.append(entry)
        return entry


RUNTIME = Runtime()
