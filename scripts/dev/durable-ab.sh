#!/usr/bin/env bash
# Compares storesvc builds under bench busdurable's load, in alternating runs.
#
#     scripts/dev/durable-ab.sh [-n PAIRS] DIR_A DIR_B
#
# DIR_A and DIR_B each hold a release `storesvc` (for example `.build/release` and a copy of another commit's
# build). Each run starts that storesvc on a fresh database in a temporary directory, lets 8 raw-client processes
# of `.build/release/bench bus` (the busdurable children: one durable one-object insert at a time over a blocking
# socket) save for 2 s, and counts storesvc's system calls, CPU and context switches with `perf stat -p`.
# It prints one line per run:
#
#     A  rate 9,766/s  cpu/save 100.9 µs  saves/commit 3.71  pwrite/commit 1.8  futex/save 1.84  cs/save 2.68
#
# Why alternate, and count: on the 2-CPU machines the rate moves ±15 % between runs of one build (the disk, the
# other tenants), more than most changes; runs of the two builds side by side share the noise, and the counts
# (system calls per commit, context switches per save) do not move with it. `commit` is one `fdatasync` (the
# writer's; a checkpoint's adds to it, about 1 in 20), `save` one `recvfrom` (each save is one read).
# Needs `perf` (linux-perf) and a release build of `bench`. See docs/bus.md, "Session 12".
set -euo pipefail

pairs=4
if [[ "${1:-}" == "-n" ]]; then
    pairs=$2
    shift 2
fi
if [[ $# -ne 2 ]]; then
    sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/.build/release/bench"
[[ -x "$bench" ]] || { echo "no $bench: run swift build -c release first" >&2; exit 1; }
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }

run() {
    local label=$1 storesvc=$2/storesvc
    local dir pid stat clients=() total
    dir=$(mktemp -d)
    "$storesvc" --socket "$dir/socket" --database "$dir/store.sqlite" >"$dir/storesvc.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do [[ -S "$dir/socket" ]] && break; sleep 0.05; done
    perf stat -e 'syscalls:sys_enter_pwrite64,syscalls:sys_enter_fdatasync,syscalls:sys_enter_futex' \
        -e 'syscalls:sys_enter_recvfrom,task-clock,context-switches' -p "$pid" -o "$dir/perf.txt" &
    stat=$!
    sleep 0.2
    for client in $(seq 8); do
        CTXBUS_BENCH_SAVE_CLIENT="$dir/socket" CTXBUS_BENCH_SAVE_CLIENT_KIND=raw "$bench" bus \
            >"$dir/client-$client.out" 2>&1 &
        clients+=($!)
    done
    wait "${clients[@]}"
    kill -INT "$stat"
    wait "$stat" || true
    kill -TERM "$pid"
    wait "$pid" || true
    total=$(cat "$dir"/client-*.out | awk '{ rate += $1 } END { printf "%.0f", rate }')
    awk -v label="$label" -v rate="$total" '
        /pwrite64/ { pwrite = $1 } /fdatasync/ { fsync = $1 } /futex/ { futex = $1 }
        /recvfrom/ { saves = $1 } /task-clock/ { cpu = $1 } /context-switches/ { switches = $1 }
        END {
            gsub(",", "", pwrite); gsub(",", "", fsync); gsub(",", "", futex); gsub(",", "", saves)
            gsub(",", "", cpu); gsub(",", "", switches)
            printf "%s  rate %6d/s  cpu/save %6.1f µs  saves/commit %4.2f  pwrite/commit %4.1f  futex/save %4.2f  cs/save %4.2f\n",
                label, rate, cpu * 1000 / saves, saves / fsync, pwrite / fsync, futex / saves, switches / saves
        }' "$dir/perf.txt"
    rm -rf "$dir"
}

for _ in $(seq "$pairs"); do
    run A "$1"
    run B "$2"
done
