#!/usr/bin/env bash
# Counts the instructions a release storesvc spends per durable save, under bench busdurable's load, with callgrind.
#
#     scripts/dev/durable-profile.sh [-c CLIENTS] [-r ROUNDS] DIR OUT
#
# DIR holds a release `storesvc` (for example `.build/release`, or a copy of another commit's build). It is started
# under `valgrind --tool=callgrind` on a fresh database; one warm-up round of CLIENTS raw-client processes of
# `.build/release/bench bus` (busdurable's children: one durable one-object insert at a time over a blocking socket,
# for 2 s) runs uncounted, then ROUNDS counted rounds. OUT names the callgrind files (OUT-01, OUT-02, …: one per thread); the script
# prints the saves and commits counted (from `store.stats`) and the instructions per save, all threads together:
#
#     saves 2193  commits 593 (3.70 per commit)  instructions 348939814  per save 159115
#
# Why instructions: on the shared 2-CPU machines time moves ±15 % between runs, and more under others' builds;
# an instruction count does not move with the load, so two builds compare in one run each (two runs of one build
# agree within 1 %). Under callgrind storesvc is some 50 times slower; with the default 8 clients its groups still
# hold 3.5-4.1 saves, as natively (`bench busdurable` prints "saves per commit"). Kernel time (system calls,
# the fsync, wake-ups) is not counted; `perf stat` or the bench's CPU per save sees it. Read OUT with
# `callgrind_annotate --inclusive=yes OUT-NN` (one file per thread: the event loops, the writer's dispatch
# thread, …) or kcachegrind. See docs/notes/hot-paths.md.
set -euo pipefail

clients=8
rounds=2
while getopts "c:r:" option; do
    case $option in
        c) clients=$OPTARG ;;
        r) rounds=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ $# -ne 2 ]]; then
    sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
bench="$root/.build/release/bench"
[[ -x "$bench" ]] || { echo "no $bench: run swift build -c release --product bench first" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
storesvc=$1/storesvc
out=$2
dir=$(mktemp -d)
trap 'kill -TERM "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT

stats() {
    python3 - "$dir/socket" <<'EOF'
import json, socket, struct, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
def call(message):
    body = json.dumps(message).encode()
    s.sendall(struct.pack(">I", len(body)) + body)
    header = b""
    while len(header) < 4: header += s.recv(4 - len(header))
    length = struct.unpack(">I", header)[0]
    data = b""
    while len(data) < length: data += s.recv(length - len(data))
    return json.loads(data)
call({"jsonrpc": "2.0", "id": 1, "method": "bus.hello", "params": {"protocol": 1, "client": "durable-profile"}})
result = call({"jsonrpc": "2.0", "id": 2, "method": "store.stats"})["result"]
print(result["saves"], result["commits"])
EOF
}

round() {
    local pids=()
    for client in $(seq "$clients"); do
        CTXBUS_BENCH_SAVE_CLIENT="$dir/socket" CTXBUS_BENCH_SAVE_CLIENT_KIND=raw "$bench" bus \
            >"$dir/client-$client.out" 2>&1 &
        pids+=($!)
    done
    wait "${pids[@]}"
}

valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes --callgrind-out-file="$out" \
    "$storesvc" --socket "$dir/socket" --database "$dir/store.sqlite" --log-level warning \
    >"$dir/storesvc.log" 2>&1 &
pid=$!
for _ in $(seq 600); do [[ -S "$dir/socket" ]] && break; sleep 0.1; done
[[ -S "$dir/socket" ]] || { cat "$dir/storesvc.log" >&2; exit 1; }
round
read -r saves0 commits0 < <(stats)
callgrind_control -i on "$pid" >/dev/null
for _ in $(seq "$rounds"); do round; done
callgrind_control -i off "$pid" >/dev/null
read -r saves1 commits1 < <(stats)
kill -TERM "$pid"
wait "$pid" || true
trap 'rm -rf "$dir"' EXIT
# The stats calls between the rounds and the toggles are a few hundred thousand instructions: noise at this scale.
total=$(cat "$out"* | awk '/^totals:/ { sum += $2 } END { printf "%d", sum }')
awk -v saves=$((saves1 - saves0)) -v commits=$((commits1 - commits0)) -v total="$total" 'BEGIN {
    printf "saves %d  commits %d (%.2f per commit)  instructions %d  per save %d\n",
        saves, commits, saves / commits, total, total / saves }'
