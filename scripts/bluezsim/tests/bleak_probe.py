"""Run by test_bleak.py in its own process: scan, connect, read, write, notify, disconnect with bleak and
print what happened as JSON."""

import asyncio
import json

from bleak import BleakClient, BleakScanner

ADDRESS = "AA:BB:CC:DD:EE:01"
BATTERY_LEVEL = "00002a19-0000-1000-8000-00805f9b34fb"
ECHO_IN = "c0defeed-0001-4000-8000-000000000000"
ECHO_OUT = "c0defeed-0002-4000-8000-000000000000"


async def main() -> dict:
    found = await BleakScanner.discover(timeout=1.0)
    device = await BleakScanner.find_device_by_address(ADDRESS, timeout=5)
    result = {"found": sorted(d.address for d in found)}
    echoes: list = []
    async with BleakClient(device) as client:
        result["connected"] = client.is_connected
        result["services"] = sorted(s.uuid for s in client.services)
        result["level"] = list(await client.read_gatt_char(BATTERY_LEVEL))
        await client.start_notify(ECHO_OUT, lambda _, data: echoes.append(bytes(data).hex()))
        await client.write_gatt_char(ECHO_IN, b"\x01\x02", response=True)
        await client.write_gatt_char(ECHO_IN, b"\x03", response=False)
        for _ in range(100):
            if len(echoes) >= 2:
                break
            await asyncio.sleep(0.01)
        await client.stop_notify(ECHO_OUT)
    result["echoes"] = echoes
    result["connected_after"] = client.is_connected
    return result


print(json.dumps(asyncio.run(main())))
