#!/usr/bin/env bash
# System calls the daemon makes per local storage request, a figure the machine's load does not change as it changes
# GB/s: one daemon and a bench-target serving a file (as perf/bench-storage.sh), `perf stat` on the daemon's pid
# counting the syscall tracepoints while `xferd bench` runs 1 MiB sequential writes and 64 KiB random reads at
# queue depth 16; the requests in that window come from `xferd status` before and after.
#
#   perf/bench-storage-syscalls.sh [--xferd-root DIR] [--dir DIR] [--duration S]
#
#   --xferd-root  the checkout whose build to run (default: this one; another worktree for a before/after)
#   --dir         where the 512 MiB test file lives (default /var/tmp)
#   --duration    seconds per bench run (default 6)
#
# Needs root (or perf_event_paranoid -1) for the tracepoints, perf and a built daemon. Installs nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir=/var/tmp
duration=6
while [[ $# -gt 0 ]]; do
  case "$1" in
    --xferd-root) root="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done
xferd="$root/bin/xferd"
command -v perf >/dev/null || { echo "perf is missing (apt-get install linux-perf)" >&2; exit 2; }
ls "$root"/daemon/target/daemon-*.jar >/dev/null 2>&1 ||
  { echo "no daemon build in $root (./mvnw -B -DskipTests package -pl daemon -am)" >&2; exit 2; }

work=$(mktemp -d /tmp/xferd-storage-syscalls.XXXX)
file="$dir/xferd-storage-syscalls-$$.bin"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -f "$file"
  rm -rf "$work"
}
trap cleanup EXIT
fallocate -l 512MiB "$file"
echo "load before: $(cat /proc/loadavg)"
"$xferd" daemon --dir "$work/run" --rpc-address 127.0.0.1:0 --metrics-address off > "$work/daemon.log" 2>&1 &
pids+=($!)
daemon_pid=$!
for _ in $(seq 1 240); do grep -qs 'xferd daemon serving' "$work/daemon.log" && break; sleep 0.5; done
"$xferd" bench-target --dir "$work/run" --name storage --file "$file" --size 536870912 --ignore-stdin \
  > "$work/target.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 240); do grep -qs '^TARGET ' "$work/target.log" && break; sleep 0.5; done
read -r _ name address size <<< "$(grep -m1 '^TARGET ' "$work/target.log")"

submitted() {
  "$xferd" status --dir "$work/run" --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["requests"]["submitted"])'
}

events=syscalls:sys_enter_io_uring_enter,syscalls:sys_enter_lseek,syscalls:sys_enter_write
events+=,syscalls:sys_enter_futex,raw_syscalls:sys_enter
# operations io_uring could not issue at once (punted to its io-wq worker threads: a thread hop per operation)
events+=,io_uring:io_uring_submit_req,io_uring:io_uring_queue_async_work
for spec in "write 1MiB" "read 64KiB --random"; do
  set -- $spec
  before=$(submitted)
  perf stat -e "$events" -p "$daemon_pid" -o "$work/perf.txt" &
  perf_pid=$!
  sleep 0.5
  "$xferd" bench --dir "$work/run" --target "$name" --target-address "$address" --target-size "$size" \
    --duration "${duration}s" --warmup 2s --client-idle gentle --operation "$1" --block-size "$2" --batch-size 1 \
    --window 16 ${3:-} > "$work/bench.log" 2>&1
  kill -INT "$perf_pid"
  wait "$perf_pid" || true
  requests=$(( $(submitted) - before ))
  echo "$spec: $(grep -m1 '^RESULT' "$work/bench.log" | grep -o 'gb_per_s=[^ ]*'), $requests requests counted"
  grep -E "syscalls|raw_syscalls|io_uring:" "$work/perf.txt" |
    awk -v n="$requests" '{ gsub(",", "", $1); printf "  %-36s %9d  %5.2f per request\n", $2, $1, $1 / n }'
done
echo "load after: $(cat /proc/loadavg)"
