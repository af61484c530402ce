"""python-dbusmock template: the stock `bluez5` template extended into a usable BlueZ for LE clients.

Adds GATT services/characteristics/descriptors under each device, Connect/Disconnect/Pair that update
Connected and ServicesResolved, discovery that finds devices, BlueZ-shaped ManufacturerData, call logging and
fault injection. Load it with dbusmock (`python -m dbusmock --system -t scripts/bluezsim/template.py`) or, with
the control interface and bluetoothd restarts, through `scripts/bluez-sim`.

Parameters (JSON with -p): devices (int, how many of the four simulated devices), cached (list of addresses,
"all" or "none": which devices bluetoothd knows at start), adapter_address (str), powered (bool).
"""

import os
import sys

_SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _SCRIPTS not in sys.path:
    sys.path.insert(0, _SCRIPTS)

BUS_NAME = "org.bluez"
MAIN_OBJ = "/"
SYSTEM_BUS = True
IS_OBJECT_MANAGER = True


def load(mock, parameters):
    """Called by dbusmock with the object at / (already owning org.bluez)."""
    from bluezsim.stack import build

    build(mock, parameters)
