"""What devices advertise over time: each advertisement a discovery receives may change a device's advertised data
(ManufacturerData, ServiceData), which the adapter then signals with PropertiesChanged.

Behaviours (DeviceSpec.advertisement):
- "static": the data never changes.
- "counter": the manufacturer data's last byte counts up with every advertisement.
- "bthome": a BTHome v2 sensor (https://bthome.io/format): service data under 0000fcd2-… holding a packet id that
  changes with every advertisement, battery (%), temperature (0.01 °C) swinging around 21.50 and humidity (0.01 %).
"""

from __future__ import annotations

from bluezsim.world import BTHOME_SERVICE_DATA, DeviceSpec

_SWING = (0, 5, 10, 5, 0, -5, -10, -5)


def bthome_payload(packet_id: int, battery: int, centi_celsius: int, centi_percent: int) -> bytes:
    """A BTHome v2 payload, unencrypted, objects in id order: packet id, battery, temperature, humidity."""
    return (
        bytes([0x40, 0x00, packet_id & 0xFF, 0x01, battery])
        + bytes([0x02])
        + centi_celsius.to_bytes(2, "little", signed=True)
        + bytes([0x03])
        + centi_percent.to_bytes(2, "little")
    )


def initial(spec: DeviceSpec) -> None:
    """Fills in the advertised data a behaviour starts with."""
    if spec.advertisement == "bthome" and BTHOME_SERVICE_DATA not in spec.service_data:
        spec.service_data[BTHOME_SERVICE_DATA] = bthome_payload(0, 93, 2150, 4500)


def advance(spec: DeviceSpec) -> bool:
    """One more advertisement of `spec`: changes its data as its behaviour says. Returns whether it changed."""
    spec.ad_tick += 1
    tick = spec.ad_tick
    if spec.advertisement == "counter" and spec.manufacturer_data:
        spec.manufacturer_data = spec.manufacturer_data[:-1] + bytes([tick & 0xFF])
        return True
    if spec.advertisement == "bthome":
        spec.service_data[BTHOME_SERVICE_DATA] = bthome_payload(
            tick, 93, 2150 + _SWING[tick % 8], 4500 + 10 * (tick % 5)
        )
        return True
    return False
