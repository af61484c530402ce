#!/usr/bin/env bash
# Entry point of the bluez-sim image: runs the simulated BlueZ (scripts/bluez-sim) in the foreground with
# its private bus in $BLUEZ_SIM_RUN_DIR (a volume shared with devicesvc), and once it is ready points the
# fixed path $BLUEZ_SIM_RUN_DIR/bus at the bus socket, whose directory the simulator names at random.
# devicesvc connects to unix:path=$BLUEZ_SIM_RUN_DIR/bus. Arguments go to the simulator
# (e.g. --devices 2, --timing connect_ms=50; see scripts/bluez-sim --help).
set -euo pipefail
run_dir=${BLUEZ_SIM_RUN_DIR:-/run/bluez-sim}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export TMPDIR=$run_dir
rm -f "$run_dir/bus" "$run_dir/ready"

# Links the bus once the simulator has written its ready file; gives up when the simulator is gone.
(
    while [ ! -s "$run_dir/ready" ]; do
        kill -0 "$$" 2>/dev/null || exit 0
        sleep 0.1
    done
    address=$(sed -n 's/^DBUS_SYSTEM_BUS_ADDRESS=unix:path=//p' "$run_dir/ready")
    ln -sfn "$address" "$run_dir/bus"
    echo "bluez-sim: the bus is at unix:path=$run_dir/bus"
) &

# exec: the simulator is this process, so the container's SIGTERM reaches it and it removes its bus.
exec "$here/scripts/bluez-sim" --ready-file "$run_dir/ready" "$@"
