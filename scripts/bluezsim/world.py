"""The simulated radio world: which LE devices exist, what they advertise and what GATT database each serves.

Pure data, no D-Bus. The template turns it into BlueZ objects; the behaviours named here ("battery",
"temperature", "heart-rate", "echo-in", "echo-out", "static") are implemented in gatt.py, the advertising
behaviours ("static", "counter", "bthome") in advertising.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

BASE_UUID_SUFFIX = "-0000-1000-8000-00805f9b34fb"

BATTERY_SERVICE = "0000180f" + BASE_UUID_SUFFIX
BATTERY_LEVEL = "00002a19" + BASE_UUID_SUFFIX
DEVICE_INFORMATION = "0000180a" + BASE_UUID_SUFFIX
MANUFACTURER_NAME = "00002a29" + BASE_UUID_SUFFIX
MODEL_NUMBER = "00002a24" + BASE_UUID_SUFFIX
ENVIRONMENTAL_SENSING = "0000181a" + BASE_UUID_SUFFIX
TEMPERATURE = "00002a6e" + BASE_UUID_SUFFIX
HEART_RATE = "0000180d" + BASE_UUID_SUFFIX
HEART_RATE_MEASUREMENT = "00002a37" + BASE_UUID_SUFFIX
BODY_SENSOR_LOCATION = "00002a38" + BASE_UUID_SUFFIX
CCC_DESCRIPTOR = "00002902" + BASE_UUID_SUFFIX
USER_DESCRIPTION = "00002901" + BASE_UUID_SUFFIX

BTHOME_SERVICE_DATA = "0000fcd2" + BASE_UUID_SUFFIX

# The custom "echo" service: what is written to ECHO_IN comes back as a notification on ECHO_OUT.
ECHO_SERVICE = "c0defeed-0000-4000-8000-000000000000"
ECHO_IN = "c0defeed-0001-4000-8000-000000000000"
ECHO_OUT = "c0defeed-0002-4000-8000-000000000000"

_SHORT = re.compile(r"^(0x)?([0-9a-fA-F]{4}|[0-9a-fA-F]{8})$")
_FULL = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_ADDRESS = re.compile(r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$")


def full_uuid(text: str) -> str:
    """Expands a 16- or 32-bit short UUID ("2a19", "0x2A19") to the 128-bit lower-case form BlueZ uses."""
    text = text.strip()
    match = _SHORT.match(text)
    if match:
        return match.group(2).lower().rjust(8, "0") + BASE_UUID_SUFFIX
    if _FULL.match(text):
        return text.lower()
    raise ValueError(f"not a Bluetooth UUID: {text!r}")


def is_address(text: str) -> bool:
    """True for a Bluetooth device address written as six colon-separated hex bytes."""
    return bool(_ADDRESS.match(text))


def device_path(adapter_path: str, address: str) -> str:
    """The object path BlueZ gives the device with this address under this adapter."""
    return f"{adapter_path}/dev_{address.upper().replace(':', '_')}"


@dataclass
class DescriptorSpec:
    """A GATT descriptor: its UUID, BlueZ flags and initial value."""

    uuid: str
    flags: list[str]
    value: bytes = b""


@dataclass
class CharacteristicSpec:
    """A GATT characteristic: UUID, BlueZ flags, initial value and the behaviour that drives its value."""

    uuid: str
    flags: list[str]
    value: bytes
    behaviour: str = "static"
    descriptors: list[DescriptorSpec] = field(default_factory=list)


@dataclass
class ServiceSpec:
    """A primary GATT service and its characteristics."""

    uuid: str
    characteristics: list[CharacteristicSpec]


@dataclass
class DeviceSpec:
    """One simulated LE peripheral.

    `cached` devices are in bluetoothd's object tree from the start (known from an earlier scan, with their
    GATT database cached); the others only appear when a discovery finds them.
    """

    address: str
    name: str
    appearance: int
    rssi: int
    tx_power: int
    cached: bool
    paired: bool
    services: list[ServiceSpec]
    manufacturer_id: int = 0xFFFF
    manufacturer_data: bytes = b""
    advertising: bool = True
    # What each advertisement does to the advertised data: "static", "counter" (the manufacturer data's last byte
    # counts up) or "bthome" (a BTHome v2 sensor whose service data changes; see advertising.py).
    advertisement: str = "static"
    # Service data by 128-bit UUID.
    service_data: dict = field(default_factory=dict)
    # Whether Connect can reach it (a beacon that only advertises is not connectable).
    connectable: bool = True
    # Whether it is in radio range: out of range, it is not found and Connect fails after connect_ms.
    in_range: bool = True
    # Advertisements sent so far (drives the changing advertised data).
    ad_tick: int = 0

    @property
    def service_uuids(self) -> list[str]:
        """The UUIDs of every service, as BlueZ lists them in Device1.UUIDs."""
        return [service.uuid for service in self.services]


def _ccc() -> DescriptorSpec:
    return DescriptorSpec(CCC_DESCRIPTOR, ["read", "write"], b"\x00\x00")


def battery_service(level: int) -> ServiceSpec:
    """Battery Service with a readable, notifying Battery Level that drains while notifying."""
    level_char = CharacteristicSpec(BATTERY_LEVEL, ["read", "notify"], bytes([level]), "battery", [_ccc()])
    return ServiceSpec(BATTERY_SERVICE, [level_char])


def device_information_service(model: str) -> ServiceSpec:
    """Device Information with two readable strings."""
    return ServiceSpec(
        DEVICE_INFORMATION,
        [
            CharacteristicSpec(MANUFACTURER_NAME, ["read"], b"ContextBus Sim"),
            CharacteristicSpec(MODEL_NUMBER, ["read"], model.encode()),
        ],
    )


def environmental_service(centi_celsius: int) -> ServiceSpec:
    """Environmental Sensing with a Temperature (sint16, 0.01 degC) that drifts while notifying."""
    value = centi_celsius.to_bytes(2, "little", signed=True)
    temperature = CharacteristicSpec(TEMPERATURE, ["read", "notify"], value, "temperature", [_ccc()])
    return ServiceSpec(ENVIRONMENTAL_SENSING, [temperature])


def heart_rate_service() -> ServiceSpec:
    """Heart Rate with a notify-only measurement (flags byte + uint8 bpm) and a readable sensor location."""
    measurement = CharacteristicSpec(HEART_RATE_MEASUREMENT, ["notify"], b"", "heart-rate", [_ccc()])
    location = CharacteristicSpec(BODY_SENSOR_LOCATION, ["read"], b"\x01")
    return ServiceSpec(HEART_RATE, [measurement, location])


def echo_service() -> ServiceSpec:
    """The custom echo service: writes (with or without response) to ECHO_IN are notified on ECHO_OUT."""
    echo_in = CharacteristicSpec(
        ECHO_IN,
        ["write-without-response", "write"],
        b"",
        "echo-in",
        [DescriptorSpec(USER_DESCRIPTION, ["read"], b"Echo input")],
    )
    # A writable User Description after the CCC (the last descriptor of every device: no other handle moves).
    echo_out = CharacteristicSpec(
        ECHO_OUT,
        ["read", "notify"],
        b"",
        "echo-out",
        [_ccc(), DescriptorSpec(USER_DESCRIPTION, ["read", "write"], b"Echo output")],
    )
    return ServiceSpec(ECHO_SERVICE, [echo_in, echo_out])


def default_world() -> list[DeviceSpec]:
    """Five LE devices; the first three are cached by bluetoothd, the last two only show up in a discovery. The
    fifth is a BTHome sensor that only advertises (not connectable)."""
    return [
        DeviceSpec(
            "AA:BB:CC:DD:EE:01", "Thermo-1", 0x0300, -52, 4, True, False,
            [battery_service(87), environmental_service(2150), device_information_service("Thermo"),
             echo_service()],
            manufacturer_data=b"\x01\x02",
        ),
        DeviceSpec(
            "AA:BB:CC:DD:EE:02", "Thermo-2", 0x0300, -61, 4, True, True,
            [battery_service(64), environmental_service(1980), device_information_service("Thermo"),
             echo_service()],
            manufacturer_data=b"\x01\x03",
        ),
        DeviceSpec(
            "AA:BB:CC:DD:EE:03", "Pulse-3", 0x0340, -70, 0, True, False,
            [battery_service(45), heart_rate_service(), device_information_service("Pulse"), echo_service()],
            manufacturer_data=b"\x02\x01",
        ),
        DeviceSpec(
            "AA:BB:CC:DD:EE:04", "Tag-4", 0x0200, -83, -4, False, False,
            [battery_service(12), device_information_service("Tag"), echo_service()],
            manufacturer_data=b"\x03\x01",
            advertisement="counter",
        ),
        DeviceSpec(
            "AA:BB:CC:DD:EE:05", "BTHome-5", 0x0000, -66, 0, False, False, [],
            advertisement="bthome", connectable=False,
        ),
    ]


def world_from_parameters(parameters: dict) -> list[DeviceSpec]:
    """The default world, trimmed to `devices` entries and with `cached` overriding which are cached.

    `cached` is a list of addresses, or "all" / "none".
    """
    from bluezsim.advertising import initial  # advertising.py imports this module

    world = default_world()
    for spec in world:
        initial(spec)
    count = int(parameters.get("devices", len(world)))
    world = world[: max(0, min(count, len(world)))]
    cached = parameters.get("cached")
    if cached is not None:
        if cached == "all":
            wanted = {spec.address for spec in world}
        elif cached == "none":
            wanted = set()
        else:
            wanted = {address.upper() for address in cached}
        for spec in world:
            spec.cached = spec.address in wanted
    return world
