#!/usr/bin/env bash
# What an idle daemon costs, thread by thread: CPU % of one core and wake-ups per second of every thread, from
# /proc/PID/task/*/schedstat (CPU ns, times scheduled) over a window, in three states on loopback:
#   alone       a daemon that has served nothing, after a settle time
#   clients     the same daemon with N idle clients connected (Python, stdlib: they only hold the connection),
#               after each did one local WRITE (intake has seen them)
#   peers       plus a second daemon B that moved data to it (its pooled peer connections stay open), both measured
#
#   perf/bench-idle.sh [--duration S] [--settle S] [--clients N] [--idle backoff|spin-backoff|...] [--no-peer]
#
#   --duration  measurement window per state (default 10 s)
#   --settle    quiet time before each window (default 5 s: the data plane's deepest idle starts after ~2-3 s)
#   --clients   idle clients in the second state (default 2)
#   --idle      the daemons' idle strategy (default: the daemon's default, backoff)
# Target (issue #16): the idle daemon (its TOTAL line) <= 2 % of one core in every state. Needs a built daemon
# (./mvnw -q -B -DskipTests package -pl daemon -am) and python3; no root, no namespaces, loopback only.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
xferd="$root/bin/xferd"
duration=10
settle=5
clients=2
idle=backoff
peer=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --settle) settle="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --idle) idle="$2"; shift 2 ;;
    --no-peer) peer=0; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
  esac
done
say() { echo "bench-idle: $*"; }
die() { echo "bench-idle: $1" >&2; exit "${2:-1}"; }
[[ -f "$root/daemon/target/daemon-0.1.0-SNAPSHOT.jar" ]] || die "build the daemon first: ./mvnw -q -B -DskipTests package -pl daemon -am" 2

work="$(mktemp -d /tmp/xferd-bench-idle.XXXXXX)"
dir_a="/dev/shm/xferd-idleA-$$"; dir_b="/dev/shm/xferd-idleB-$$"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir_a" "$dir_b"
  echo "bench-idle: logs in $work"
}
trap cleanup EXIT
(umask 077; head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/cluster.token")

start_daemon() { # directory log
  "$xferd" daemon --dir "$1" --rpc-address 127.0.0.1:0 --cluster-token-file "$work/cluster.token" \
    --metrics-address off --idle "$idle" > "$2" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 240); do
    grep -q 'xferd daemon serving' "$2" && return 0
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.5
  done
  cat "$2" >&2; die "the daemon in $1 did not start (log above)"
}

measure() { # label pid...: per-thread CPU % of a core and wake-ups/s over $duration s, then the process totals
  local label="$1"; shift
  say "$label: settling $settle s, then measuring $duration s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
  sleep "$settle"
  "$here/thread-cpu.sh" --seconds "$duration" --label "$label" "$@"
}

start_daemon "$dir_a" "$work/daemon-a.log"; daemon_a=${pids[-1]}
say "daemon A pid $daemon_a ($idle)"
measure alone "$daemon_a"

for i in $(seq 1 "$clients"); do
  PYTHONPATH="$root/python" python3 - "$dir_a" "idle-client-$i" > "$work/client-$i.log" 2>&1 <<'EOF' &
import sys, time
import xferd
client = xferd.connect(sys.argv[1], sys.argv[2])
memory = client.allocate_memory(8192)
client.register_memory(memory.address, 8192)
client.transfer_sync(xferd.WRITE, client.segment_handle, memory.address, memory.address + 4096, 4096)
print("CONNECTED", flush=True)
time.sleep(3600)
EOF
  pids+=($!)
done
for i in $(seq 1 "$clients"); do
  for _ in $(seq 1 120); do grep -q CONNECTED "$work/client-$i.log" && break; sleep 0.5; done
  grep -q CONNECTED "$work/client-$i.log" || { cat "$work/client-$i.log" >&2; die "idle client $i did not connect"; }
done
measure clients "$daemon_a"

if [[ $peer == 1 ]]; then
  start_daemon "$dir_b" "$work/daemon-b.log"; daemon_b=${pids[-1]}
  "$xferd" bench-target --dir "$dir_a" --name idle-target --size 64MiB --pattern 42 --ignore-stdin \
    > "$work/target.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 240); do grep -q '^TARGET ' "$work/target.log" && break; sleep 0.5; done
  grep -q '^TARGET ' "$work/target.log" || { cat "$work/target.log" >&2; die "bench-target did not start"; }
  read -r _ target_name target_address target_size <<< "$(grep -m1 '^TARGET ' "$work/target.log")"
  "$xferd" bench --dir "$dir_b" --target "$target_name" --target-address "$target_address" \
    --target-size "$target_size" --operation write --block-size 1MiB --warmup 0s --duration 2s --client-idle gentle \
    > "$work/bench.log" 2>&1 || { cat "$work/bench.log" >&2; die "xferd bench B -> A failed"; }
  say "B (pid $daemon_b) wrote to A for 2 s; its peer connections stay open"
  measure peers "$daemon_a" "$daemon_b"
fi
